using System;
using System.Threading;

namespace PriorityAsync;

/// <summary>Describes a callback that a priority scheduler will never run (<see cref="PriorityScheduler.WorkDropped"/>).</summary>
public sealed class WorkDroppedEventArgs : EventArgs
{
    internal WorkDroppedEventArgs(int level, SendOrPostCallback callback, object? state, DropReason reason)
    {
        Level = level;
        Callback = callback;
        State = state;
        Reason = reason;
    }

    /// <summary>Gets the level the callback was posted at.</summary>
    public int Level { get; }

    /// <summary>Gets the callback that did not run. A handler may run it elsewhere, for example on the thread pool.</summary>
    public SendOrPostCallback Callback { get; }

    /// <summary>Gets the state that was posted with the callback.</summary>
    public object? State { get; }

    /// <summary>Gets why the callback did not run.</summary>
    public DropReason Reason { get; }
}
