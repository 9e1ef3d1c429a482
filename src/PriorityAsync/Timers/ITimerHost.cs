using System.Runtime.ExceptionServices;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The scheduler side of <see cref="LoopTimers"/>: what the shared timer machinery needs from the scheduler that owns it (a
/// <see cref="PriorityContext"/> or a <see cref="PriorityThreadPool"/>). Nothing here is on the per-item path: arming, firing, dropping.
/// </summary>
internal interface ITimerHost
{
    /// <summary>The scheduler's name, for messages.</summary>
    string Name { get; }

    /// <summary>"PriorityContext" or "PriorityThreadPool", for messages.</summary>
    string Kind { get; }

    /// <summary>The scheduler's state, for messages.</summary>
    PriorityContextState State { get; }

    /// <summary>The level a timer created now by the calling code fires at: the caller's level on this scheduler, else the default one.</summary>
    int CreatingLevel();

    /// <summary>Queues an item from any thread (a cancelled delay's firing, a delay's resumption); after the end it is dropped.</summary>
    void Enqueue(int level, SendOrPostCallback callback, object? state, ExecutionContext? executionContext);

    /// <summary>Queues the firing of a due timer, from <see cref="LoopTimers.FireDue"/> (under the timer lock, on a thread that runs
    /// the scheduler's items).</summary>
    void EnqueueTimerFiring(int level, TimerEntry entry);

    /// <summary>The earliest timer is due: raise the scheduler's flag (a full fence) and wake it if it is parked.</summary>
    void RaiseTimersDue();

    /// <summary>Whether the calling code runs on this scheduler at <paramref name="level"/> (a delay's firing may then resume its
    /// awaiter inline).</summary>
    bool IsRunningAt(int level);

    /// <summary>Whether <paramref name="current"/> is one of this scheduler's per-level contexts (a controller's context is not), and its level.</summary>
    bool TryGetOwnLevel(SynchronizationContext current, out int level);

    /// <summary>T4 (Timers/LoopTimers.cs): the clock threw in <see cref="LoopTimers.FireDue"/>, on a thread that runs the scheduler's
    /// items, outside the timer lock: fault with <paramref name="failure"/> (the provider's own exception), as for an item's exception
    /// that no handler marked handled, but without raising UnhandledException. Called once.</summary>
    void OnClockFailed(ExceptionDispatchInfo failure);

    /// <summary>Counts and reports a timer dropped as the scheduler finished (<see cref="DropReason.TimerArmedAtFinish"/>); a throwing
    /// WorkDropped handler's exception propagates.</summary>
    void OnTimerDropped(TimerEntry entry);
}
