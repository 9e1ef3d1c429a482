using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Threading;

namespace PriorityAsync;

/// <summary>
/// The awaitable returned by <see cref="Priority.Checkpoint"/> and <see cref="PriorityContext.Checkpoint"/>: completes at once unless
/// the caller should yield (<see cref="Priority.ShouldYield"/>); then the rest of the method is queued at the back of its level.
/// </summary>
/// <remarks>Awaiting it allocates nothing when it completes at once, and nothing beyond the async method's own state machine box when
/// it queues.</remarks>
public readonly struct CheckpointAwaitable
{
    // The caller's level: a PrioritySynchronizationContext (or a controller's), or a PriorityThreadPoolSynchronizationContext.
    private readonly SynchronizationContext _level;

    internal CheckpointAwaitable(PrioritySynchronizationContext level) => _level = level;

    internal CheckpointAwaitable(PriorityThreadPoolSynchronizationContext level) => _level = level;

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_level);

    /// <summary>The awaiter of <see cref="CheckpointAwaitable"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly SynchronizationContext _level;

        internal Awaiter(SynchronizationContext level) => _level = level;

        /// <summary>Gets whether the method can go on at once: on the scheduler's thread (the loop's, or one of a pool's), with nothing to
        /// yield to (see <see cref="Priority.ShouldYield"/>). A finished scheduler also completes at once, and <see cref="GetResult"/> then
        /// throws.</summary>
        public bool IsCompleted => _level is PriorityThreadPoolSynchronizationContext pool
            ? !pool.Pool.ShouldYieldAt(pool.Level)
            : !Loop.Context.ShouldYieldAt(Loop.Level);

        /// <summary>Queues the continuation at the back of the caller's level, flowing the current <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => QueueContinuation(continuation, flowExecutionContext: true);

        /// <summary>Queues the continuation at the back of the caller's level without flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation (the async state machine's cached delegate, queued as is).</param>
        public void UnsafeOnCompleted(Action continuation) => QueueContinuation(continuation, flowExecutionContext: false);

        /// <summary>Ends the await. Throws <see cref="ObjectDisposedException"/> if the scheduler finished before the continuation could run.</summary>
        public void GetResult()
        {
            if (_level is PriorityThreadPoolSynchronizationContext pool)
            {
                pool.Pool.ThrowIfResumedAfterFinish(pool.Level);
            }
            else
            {
                Loop.Context.ThrowIfResumedAfterFinish(Loop.Level);
            }
        }

        // Not the pool's: a PrioritySynchronizationContext by construction (no cast check needed).
        private PrioritySynchronizationContext Loop => Unsafe.As<PrioritySynchronizationContext>(_level);

        private void QueueContinuation(Action continuation, bool flowExecutionContext)
        {
            if (_level is PriorityThreadPoolSynchronizationContext pool)
            {
                pool.Pool.QueueContinuation(pool.Level, continuation, flowExecutionContext);
            }
            else
            {
                Loop.QueueContinuation(continuation, flowExecutionContext);
            }
        }
    }
}
