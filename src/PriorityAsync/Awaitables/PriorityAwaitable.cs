using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// The awaitable returned by <see cref="PriorityContext.Prioritize(int)"/>, <see cref="PriorityContext.Yield(int)"/>,
/// <see cref="Priority.Prioritize(int)"/> and <see cref="Priority.Yield"/>: awaiting it moves the rest of the method to a level.
/// </summary>
/// <remarks>Modelled on <see cref="System.Runtime.CompilerServices.YieldAwaitable"/>. Awaiting it allocates nothing beyond the async method's own state machine box.
/// Returned by both schedulers (<see cref="PriorityContext"/> and <see cref="PriorityThreadPool"/>): the awaiter holds the scheduler
/// it hops to, and an exact-type check of a sealed class chooses the path.</remarks>
public readonly struct PriorityAwaitable
{
    // A PriorityContext or a PriorityThreadPool (both sealed: telling them apart is one compare of the type handle).
    private readonly object _scheduler;
    private readonly int _level;
    private readonly bool _alwaysQueue;

    internal PriorityAwaitable(PriorityContext context, int level, bool alwaysQueue)
    {
        _scheduler = context;
        _level = level;
        _alwaysQueue = alwaysQueue;
    }

    internal PriorityAwaitable(PriorityThreadPool pool, int level, bool alwaysQueue)
    {
        _scheduler = pool;
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
        private readonly object _scheduler;
        private readonly int _level;
        private readonly bool _alwaysQueue;

        internal Awaiter(object scheduler, int level, bool alwaysQueue)
        {
            _scheduler = scheduler;
            _level = level;
            _alwaysQueue = alwaysQueue;
        }

        /// <summary>
        /// Gets whether the method can go on at once: on the loop thread (on a pool, on one of its threads), when nothing is queued at a
        /// level above the target level (on a pool: nothing this thread may run, and with caps the target level has room; a <c>Yield</c>
        /// never completes at once). A finished scheduler also completes at once, and <see cref="GetResult"/> then throws.
        /// </summary>
        /// <remarks>When it returns <see langword="true"/> on the scheduler's thread, the target level is already current.</remarks>
        public bool IsCompleted => _scheduler is PriorityContext context
            ? (!_alwaysQueue && context.TryContinueInlineAt(_level)) || context.IsFinished
            : PoolIsCompleted();

        /// <summary>Queues the continuation at the target level, flowing the current <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => QueueContinuation(continuation, flowExecutionContext: true);

        /// <summary>Queues the continuation at the target level without flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation (the async state machine's cached delegate, queued as is).</param>
        public void UnsafeOnCompleted(Action continuation) => QueueContinuation(continuation, flowExecutionContext: false);

        /// <summary>Ends the await (the target level is current: made so by <see cref="IsCompleted"/>, or by the scheduler that ran the
        /// queued continuation). Throws <see cref="ObjectDisposedException"/> if the scheduler finished before the continuation could run.</summary>
        public void GetResult()
        {
            if (_scheduler is PriorityContext context)
            {
                context.ThrowIfResumedAfterFinish(_level);
            }
            else
            {
                ((PriorityThreadPool)_scheduler).ThrowIfResumedAfterFinish(_level);
            }
        }

        private bool PoolIsCompleted()
        {
            var pool = (PriorityThreadPool)_scheduler;
            return (!_alwaysQueue && pool.TryContinueInlineAt(_level)) || pool.HasStopped; // faulted or finished: GetResult throws
        }

        private void QueueContinuation(Action continuation, bool flowExecutionContext)
        {
            if (_scheduler is PriorityContext context)
            {
                context.QueueContinuation(_level, continuation, flowExecutionContext);
            }
            else
            {
                ((PriorityThreadPool)_scheduler).QueueContinuation(_level, continuation, flowExecutionContext);
            }
        }
    }
}
