using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// One queued unit of work: a callback, its state, and the <see cref="System.Threading.ExecutionContext"/> it runs in. A struct, so
/// queueing it allocates nothing: continuations (<see cref="System.Action"/>) travel as <see cref="State"/> with a cached static callback.
/// </summary>
/// <remarks>
/// <para><see cref="ExecutionContext"/> is the context captured where a plain callback entered the loop, or <see langword="null"/>:
/// the default context (rule E1 at the top of Context/PriorityContext.cs, and <see cref="ExecutionContextFlow"/>). A field (8 bytes per
/// queue slot) rather than a wrapper object: a posted callback then costs nothing more to queue whatever its poster has set, and
/// the continuation of an <c>OnCompleted</c> await no longer needs a wrapper delegate.</para>
/// <para><see cref="EnqueuedAt"/> is the one diagnostic field: the clock reading taken when the item was queued, or 0 when the
/// queue-wait histogram was off at that moment. A field rather than a wrapper allocated or pooled only while the histogram is on: a
/// wrapper would cost an allocation or a pool round trip per item when on, and would hide the callback from the identity checks of the
/// drop path. See docs/observability.md for the measured cost.</para>
/// </remarks>
internal readonly struct WorkItem
{
    public readonly SendOrPostCallback Callback;
    public readonly object? State;
    public readonly ExecutionContext? ExecutionContext;
    public readonly long EnqueuedAt;

    public WorkItem(SendOrPostCallback callback, object? state, ExecutionContext? executionContext = null, long enqueuedAt = 0)
    {
        Callback = callback;
        State = state;
        ExecutionContext = executionContext;
        EnqueuedAt = enqueuedAt;
    }

    /// <summary>Runs the callback in the item's context (E1): whatever the previous item left on the thread is gone first.</summary>
    public void Invoke()
    {
        ExecutionContextFlow.Enter(ExecutionContext);
        Callback(State);
    }
}
