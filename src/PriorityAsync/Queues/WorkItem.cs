using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// One queued unit of work: a callback and its state. A struct, so queueing it allocates nothing:
/// continuations (<see cref="System.Action"/>) travel as <see cref="State"/> with a cached static callback.
/// </summary>
/// <remarks>
/// <see cref="EnqueuedAt"/> is the one diagnostic field: the clock reading taken when the item was queued, or 0 when the queue-wait
/// histogram was off at that moment. A field (8 bytes per queue slot, always) rather than a wrapper object allocated or pooled
/// only while the histogram is on: a wrapper would cost an allocation or a pool round trip per item when on, and would hide the
/// callback from the identity checks of the drop path. See docs/observability.md for the measured cost.
/// </remarks>
internal readonly struct WorkItem
{
    public readonly SendOrPostCallback Callback;
    public readonly object? State;
    public readonly long EnqueuedAt;

    public WorkItem(SendOrPostCallback callback, object? state, long enqueuedAt = 0)
    {
        Callback = callback;
        State = state;
        EnqueuedAt = enqueuedAt;
    }

    public void Invoke() => Callback(State);
}
