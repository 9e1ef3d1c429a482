using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Hosting.Internal;

/// <summary>The lifecycle of a <see cref="PriorityThreadPoolBackgroundService"/>: <see cref="WorkerCore"/> on a <see cref="PriorityThreadPool"/>.</summary>
/// <remarks>The entry is queued with <see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>, whose task is <c>ExecuteAsync</c>'s;
/// the pool cannot stop before <see cref="Complete"/> (nothing else releases its own hold).</remarks>
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

    protected override Task StartEntry(int level, TaskCompletionSource running)
    {
        Task execute = _pool!.InvokeAsync(
            () =>
            {
                running.TrySetResult();
                return InvokeExecuteAsync();
            },
            level);
        OnExecuteAsyncStarted(execute);

        // InvokeAsync refusing the work (ExecuteAsync faulting before it signalled) must not leave StartAsync waiting forever.
        return Task.WhenAny(running.Task, execute);
    }
}
