using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Hosting.Internal;

/// <summary>The lifecycle of a <see cref="PriorityThreadPoolBackgroundService"/>: <see cref="WorkerCore"/> on a <see cref="PriorityThreadPool"/>.</summary>
/// <remarks>The pool cannot stop normally before <see cref="Complete"/> (nothing else releases its own hold). If it is completed from
/// outside while <c>ExecuteAsync</c> is still pending, its continuations are dropped, as on the loop.</remarks>
internal sealed class PoolWorkerCore : WorkerCore
{
    private PriorityThreadPool? _pool;

    public PoolWorkerCore(Type workerType, Func<CancellationToken, Task> executeAsync)
        : base(workerType, executeAsync)
    {
    }

    /// <summary>The worker's pool, once started; <see langword="null"/> before.</summary>
    public PriorityThreadPool? PoolOrNull => _pool;

    protected override PriorityScheduler CreateScheduler(PriorityWorkerOptions options, string name)
    {
        _pool = new PriorityThreadPool(WorkerSchedulerOptions.ForPool(options, name, TimeProvider));
        return _pool;
    }

    protected override void Complete() => _pool!.Complete();
}
