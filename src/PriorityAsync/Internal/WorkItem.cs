using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// One queued unit of work: a callback and its state. A struct, so queueing it allocates nothing:
/// continuations (<see cref="System.Action"/>) travel as <see cref="State"/> with a cached static callback.
/// </summary>
internal readonly struct WorkItem
{
    public readonly SendOrPostCallback Callback;
    public readonly object? State;

    public WorkItem(SendOrPostCallback callback, object? state)
    {
        Callback = callback;
        State = state;
    }

    public void Invoke() => Callback(State);
}
