using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// The awaitable returned by <see cref="Priority.Checkpoint"/> and <see cref="PriorityContext.Checkpoint"/>: completes at once unless
/// the caller should yield (<see cref="Priority.ShouldYield"/>); then the rest of the method is queued at the back of its level.
/// </summary>
/// <remarks>Awaiting it allocates nothing when it completes at once, and nothing beyond the async method's own state machine box when
/// it queues.</remarks>
public readonly struct CheckpointAwaitable
{
    // The caller's level: one of the scheduler's per-level contexts, or a controller's.
    private readonly PrioritySynchronizationContext _level;

    internal CheckpointAwaitable(PrioritySynchronizationContext level) => _level = level;

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_level);

    /// <summary>The awaiter of <see cref="CheckpointAwaitable"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly PrioritySynchronizationContext _level;

        internal Awaiter(PrioritySynchronizationContext level) => _level = level;

        /// <summary>Gets whether the method can go on at once: on a thread of the scheduler, with nothing to yield to (see
        /// <see cref="Priority.ShouldYield"/>). A faulted or finished scheduler also completes at once, and <see cref="GetResult"/> then
        /// throws.</summary>
        public bool IsCompleted => !_level.Scheduler.ShouldYieldAt(_level.EffectiveLevel);

        /// <summary>Queues the continuation at the back of the caller's level, flowing the current <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => _level.QueueContinuation(continuation, flowExecutionContext: true);

        /// <summary>Queues the continuation at the back of the caller's level without flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation (the async state machine's cached delegate, queued as is).</param>
        public void UnsafeOnCompleted(Action continuation) => _level.QueueContinuation(continuation, flowExecutionContext: false);

        /// <summary>Ends the await. Throws <see cref="ObjectDisposedException"/> if the scheduler faulted or finished before the
        /// continuation could run.</summary>
        public void GetResult() => PriorityScheduler.ThrowIfResumedAfterFinish(_level);
    }
}
