using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// The awaitable returned by <see cref="PriorityScheduler.Prioritize(int)"/>, <see cref="PriorityScheduler.Yield(int)"/>,
/// <see cref="Priority.Prioritize(int)"/> and <see cref="Priority.Yield"/>: awaiting it moves the rest of the method to a level.
/// </summary>
/// <remarks>Modelled on <see cref="System.Runtime.CompilerServices.YieldAwaitable"/>. Awaiting it allocates nothing beyond the async
/// method's own state machine box. The awaiter holds the scheduler it hops to and the level.</remarks>
public readonly struct PriorityAwaitable
{
    private readonly PriorityScheduler _scheduler;
    private readonly int _level;
    private readonly bool _alwaysQueue;

    internal PriorityAwaitable(PriorityScheduler scheduler, int level, bool alwaysQueue)
    {
        _scheduler = scheduler;
        _level = level;
        _alwaysQueue = alwaysQueue;
    }

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_scheduler, _level, _alwaysQueue);

    /// <summary>The awaiter of <see cref="PriorityAwaitable"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly PriorityScheduler _scheduler;
        private readonly int _level;
        private readonly bool _alwaysQueue;

        internal Awaiter(PriorityScheduler scheduler, int level, bool alwaysQueue)
        {
            _scheduler = scheduler;
            _level = level;
            _alwaysQueue = alwaysQueue;
        }

        /// <summary>
        /// Gets whether the method can go on at once: on a thread of the scheduler, when nothing that thread may run waits at a level
        /// above the target level (on a pool, with caps, the target level must also have room; a <c>Yield</c> never completes at
        /// once). A faulted or finished scheduler also completes at once, and <see cref="GetResult"/> then throws.
        /// </summary>
        /// <remarks>When it returns <see langword="true"/> on the scheduler's thread, the target level is already current.</remarks>
        public bool IsCompleted => (!_alwaysQueue && _scheduler.TryContinueInlineAt(_level)) || _scheduler.HasStopped;

        /// <summary>Queues the continuation at the target level, flowing the current <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => _scheduler.QueueContinuation(_level, continuation, flowExecutionContext: true);

        /// <summary>Queues the continuation at the target level without flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation (the async state machine's cached delegate, queued as is).</param>
        public void UnsafeOnCompleted(Action continuation) => _scheduler.QueueContinuation(_level, continuation, flowExecutionContext: false);

        /// <summary>Ends the await (the target level is current: made so by <see cref="IsCompleted"/>, or by the scheduler that ran the
        /// queued continuation). Throws <see cref="ObjectDisposedException"/> if the scheduler faulted or finished before the method
        /// could resume.</summary>
        public void GetResult() => _scheduler.ThrowIfResumedAfterFinish(_level);
    }
}
