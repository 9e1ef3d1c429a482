using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// One queued unit of work: a callback, its state, and the <see cref="System.Threading.ExecutionContext"/> it runs in. A struct, so
/// queueing it allocates nothing: continuations (<see cref="System.Action"/>) travel as <see cref="State"/> with a cached static callback.
/// </summary>
/// <remarks>
/// <para><see cref="ExecutionContext"/> is the context captured where a plain callback entered the scheduler, or <see langword="null"/>:
/// the default context ([E-FLOW]). A field (8 bytes per queue slot) rather than a wrapper object, so a posted callback costs nothing
/// more to queue whatever its poster has set.</para>
/// <para><see cref="EnqueuedAt"/> is the one diagnostic field: the clock reading taken when the item was queued, or 0 when nothing
/// asked for it ([O-SLOW]). A field rather than a wrapper, which would cost an allocation or a pool round trip per item and hide the
/// callback from the identity checks of the drop path.</para>
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

    /// <summary>Runs the callback in the item's context ([E-FLOW]): whatever the previous item left on the thread is gone first.</summary>
    public void Invoke()
    {
        ExecutionContextFlow.Enter(ExecutionContext);
        Callback(State);
    }
}
