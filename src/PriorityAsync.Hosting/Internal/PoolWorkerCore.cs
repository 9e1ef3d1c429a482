using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Hosting.Internal;

/// <summary>The lifecycle of a <see cref="PriorityThreadPoolBackgroundService"/>: <see cref="WorkerCore"/> on a <see cref="PriorityThreadPool"/>.</summary>
/// <remarks>The entry is queued with <see cref="PriorityThreadPool.InvokeAsync(Func{Task}, int)"/>, whose task is <c>ExecuteAsync</c>'s;
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

    protected override Task Completion => _pool!.Completion;

    protected override IPriorityScheduler CreateScheduler(PriorityWorkerOptions options, string name)
    {
        _pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = options.Levels,
            DefaultLevel = options.DefaultLevel,
            ThreadCount = options.ThreadCount ?? Environment.ProcessorCount,
            MaxConcurrencyPerLevel = options.MaxConcurrencyPerLevel,
            Name = name,
            IdleSpinCount = options.IdleSpinCount,
            StallTimeout = options.StallTimeout,
            TimeSlice = options.TimeSlice,
            Policy = options.Policy,
            TimeProvider = TimeProvider,
        });
        return _pool;
    }

    protected override void Complete() => _pool!.Complete();

    protected override void CancelRootChildren() => _pool!.CancelRootChildren();

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
