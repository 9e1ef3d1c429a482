using System;
using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// The awaitable returned by <see cref="PriorityContext.Prioritize(int)"/>, <see cref="PriorityContext.Yield(int)"/>,
/// <see cref="Priority.Prioritize(int)"/> and <see cref="Priority.Yield"/>: awaiting it moves the rest of the method to a level.
/// </summary>
/// <remarks>Modelled on <see cref="System.Runtime.CompilerServices.YieldAwaitable"/>. Awaiting it allocates nothing beyond the async method's own state machine box.</remarks>
public readonly struct PriorityAwaitable
{
    private readonly PriorityContext _context;
    private readonly int _level;
    private readonly bool _alwaysQueue;

    internal PriorityAwaitable(PriorityContext context, int level, bool alwaysQueue)
    {
        _context = context;
        _level = level;
        _alwaysQueue = alwaysQueue;
    }

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_context, _level, _alwaysQueue);

    /// <summary>The awaiter of <see cref="PriorityAwaitable"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly PriorityContext _context;
        private readonly int _level;
        private readonly bool _alwaysQueue;

        internal Awaiter(PriorityContext context, int level, bool alwaysQueue)
        {
            _context = context;
            _level = level;
            _alwaysQueue = alwaysQueue;
        }

        /// <summary>
        /// Gets whether the method can go on at once: on the loop thread, when nothing is queued at a level above the target level
        /// (a <c>Yield</c> never completes at once). A finished context also completes at once, and <see cref="GetResult"/> then throws.
        /// </summary>
        /// <remarks>When it returns <see langword="true"/> on the loop thread, the target level is already current.</remarks>
        public bool IsCompleted => (!_alwaysQueue && _context.TryContinueInlineAt(_level)) || _context.IsFinished;

        /// <summary>Queues the continuation at the target level, flowing the current <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => _context.QueueContinuation(_level, continuation, flowExecutionContext: true);

        /// <summary>Queues the continuation at the target level without flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation (the async state machine's cached delegate, queued as is).</param>
        public void UnsafeOnCompleted(Action continuation) => _context.QueueContinuation(_level, continuation, flowExecutionContext: false);

        /// <summary>Ends the await (the target level is current: made so by <see cref="IsCompleted"/>, or by the loop that ran the
        /// queued continuation). Throws <see cref="ObjectDisposedException"/> if the context finished before the continuation could run.</summary>
        public void GetResult() => _context.ThrowIfResumedAfterFinish(_level);
    }
}
