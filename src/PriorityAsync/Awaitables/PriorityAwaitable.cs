using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// The awaitable returned by <see cref="PriorityScheduler.Prioritize(int)"/>, <see cref="PriorityScheduler.Yield(int)"/>,
/// <see cref="Priority.Prioritize(int)"/> and <see cref="Priority.Yield"/>: awaiting it moves the rest of the method to a level.
/// </summary>
/// <remarks>Modelled on <see cref="System.Runtime.CompilerServices.YieldAwaitable"/>. Awaiting it allocates nothing beyond the async
/// method's own state machine box. The awaiter holds the scheduler and the level it hops to, and, for code that runs in a flow of
/// work the scheduler can raise, that flow's context at the level (docs/concepts.md, "Priority inversion").</remarks>
public readonly struct PriorityAwaitable
{
    private readonly PriorityScheduler _scheduler;
    private readonly FlowContext? _flow;
    private readonly int _level;
    private readonly bool _alwaysQueue;

    /// <param name="scheduler">The scheduler the method moves on.</param>
    /// <param name="flow">Null for code outside any flow, which goes on in the level's own context; else the flow's context at
    /// <paramref name="level"/> ([X-FLOW]).</param>
    /// <param name="level">The validated level.</param>
    /// <param name="alwaysQueue">Whether it never completes at once (a <c>Yield</c>).</param>
    internal PriorityAwaitable(PriorityScheduler scheduler, FlowContext? flow, int level, bool alwaysQueue)
    {
        _scheduler = scheduler;
        _flow = flow;
        _level = level;
        _alwaysQueue = alwaysQueue;
    }

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_scheduler, _flow, _level, _alwaysQueue);

    /// <summary>The awaiter of <see cref="PriorityAwaitable"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly PriorityScheduler _scheduler;
        private readonly FlowContext? _flow;
        private readonly int _level;
        private readonly bool _alwaysQueue;

        internal Awaiter(PriorityScheduler scheduler, FlowContext? flow, int level, bool alwaysQueue)
        {
            _scheduler = scheduler;
            _flow = flow;
            _level = level;
            _alwaysQueue = alwaysQueue;
        }

        /// <summary>
        /// Gets whether the method can go on at once: on a thread of the scheduler, when nothing that thread may run waits at a level
        /// above the target level (on a pool, with caps, the target level must also have room; a <c>Yield</c> never completes at
        /// once). A faulted or finished scheduler also completes at once, and <see cref="GetResult"/> then throws.
        /// </summary>
        /// <remarks>When it returns <see langword="true"/> on the scheduler's thread, the target level is already current.</remarks>
        public bool IsCompleted => (!_alwaysQueue && TryContinueInline()) || _scheduler.HasStopped;

        /// <summary>Queues the continuation at the target level, flowing the current <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => QueueContinuation(continuation, flowExecutionContext: true);

        /// <summary>Queues the continuation at the target level without flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation (the async state machine's cached delegate, queued as is).</param>
        public void UnsafeOnCompleted(Action continuation) => QueueContinuation(continuation, flowExecutionContext: false);

        /// <summary>Ends the await (the target level is current: made so by <see cref="IsCompleted"/>, or by the scheduler that ran the
        /// queued continuation). Throws <see cref="ObjectDisposedException"/> if the scheduler faulted or finished before the method
        /// could resume.</summary>
        public void GetResult() => _scheduler.ThrowIfResumedAfterFinish(_level);

        /// <summary>[A-INLINE]. The loop's decision is called directly (<see cref="PriorityContext"/> is sealed), whatever profile the
        /// JIT collected: a virtual call is devirtualized only with a profile of its receivers, and this awaiter is shared with
        /// <c>Yield</c>, whose awaits never reach the call (after Yields it stayed an indirect call). Not forced inline into the
        /// caller: where the profile marks it cold, that made the await slower (21 against 12 ns in the A/B's order of cases).</summary>
        private bool TryContinueInline() =>
            _scheduler is PriorityContext loop ? loop.TryContinueInlineAt(_level, _flow) : _scheduler.TryContinueInlineAt(_level, _flow);

        private void QueueContinuation(Action continuation, bool flowExecutionContext)
        {
            if (_flow is null)
            {
                _scheduler.QueueContinuation(_level, continuation, flowExecutionContext);
            }
            else
            {
                _flow.QueueContinuation(continuation, flowExecutionContext);
            }
        }
    }
}
