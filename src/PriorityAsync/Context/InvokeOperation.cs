using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One <see cref="PriorityContext.InvokeAsync(Func{Task}, int)"/> call: the delegate, and the task handed back to the caller, which
/// completes as the delegate's own task does (unwrapped). One object per call (plus the task it owns); one more delegate only when
/// the work completes asynchronously.
/// </summary>
/// <remarks>
/// Invariant: the returned task always completes. The operation is either run by the loop (the task then follows the delegate's
/// task), or dropped by the context (<see cref="SchedulerInvokeOperation{TResult}.Abandon"/> faults it). While the delegate's task is pending, the operation holds one
/// outstanding operation on the context, as an <c>async void</c> method does, so the loop cannot finish and drop the continuations
/// the work still has to run.
/// </remarks>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal sealed class InvokeOperation<TResult> : SchedulerInvokeOperation<TResult>
{
    private readonly PriorityContext _context;

    public InvokeOperation(PriorityContext context, int level, Delegate work, bool hasResult)
        : base(context, level, work, hasResult)
    {
        _context = context;
    }

    protected override string Kind => "InvokeAsync";

    // Held until the work's task completes (see the invariant). On the loop thread, while the loop runs: it cannot have finished.
    protected override void Hold() => _context.OperationStarted();

    protected override void Release() => _context.OperationCompleted();
}
