namespace PriorityAsync.Internal;

/// <summary>
/// What one <see cref="Watchdog"/> watches: a <see cref="PriorityContext"/>'s loop, or one thread of a <see cref="PriorityThreadPool"/>
/// (each thread is watched on its own: a sum over the threads would keep moving while one of them is blocked).
/// </summary>
internal interface IWatchdogTarget
{
    /// <summary>Whether the scheduler has finished (nothing to watch any more).</summary>
    bool IsFinished { get; }

    /// <summary>The number of levels.</summary>
    int Levels { get; }

    /// <summary>The number of items this target has started so far (any thread, acquire read).</summary>
    long DispatchCount { get; }

    /// <summary>Items waiting at <paramref name="level"/> that this target would run (a moment's count, not the mask: I1 allows stale
    /// bits); 0 for a pool thread that is parked (an idle thread is not stalled).</summary>
    int PendingCount(int level);

    /// <summary>The level of an overdue loop timer, or -1.</summary>
    int OverdueTimerLevel();

    /// <summary>Raises the report (on the watchdog thread).</summary>
    void OnStallDetected(StallDetectedEventArgs report);
}
