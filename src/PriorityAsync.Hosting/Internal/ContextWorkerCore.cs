using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Hosting.Internal;

/// <summary>The lifecycle of a <see cref="PriorityBackgroundService"/>: <see cref="WorkerCore"/> on a <see cref="PriorityContextThread"/>.</summary>
/// <remarks>The loop cannot stop normally before <see cref="Complete"/>: the <see cref="PriorityContextThread"/> holds it open until then.
/// If the loop is completed from outside while <c>ExecuteAsync</c> is still pending, its continuations are dropped.</remarks>
internal sealed class ContextWorkerCore : WorkerCore
{
    private PriorityContextThread? _thread;

    public ContextWorkerCore(Type workerType, Func<CancellationToken, Task> executeAsync)
        : base(workerType, executeAsync)
    {
    }

    /// <summary>The worker's context, once started; <see langword="null"/> before.</summary>
    public PriorityContext? ContextOrNull => _thread?.Context;

    protected override PriorityScheduler CreateScheduler(PriorityWorkerOptions options, string name)
    {
        _thread = new PriorityContextThread(WorkerSchedulerOptions.ForContext(options, name, TimeProvider));
        return _thread.Context;
    }

    protected override void Complete() => _thread!.Complete();
}
