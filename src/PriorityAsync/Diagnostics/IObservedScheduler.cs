using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// A scheduler the diagnostics watch while it runs: the single loop (<see cref="PriorityContext"/>) or the pool
/// (<see cref="PriorityThreadPool"/>). The observable instruments read its counters, the histograms and the trace recorder tag
/// their records with its name and kind, and <see cref="ContextRegistry"/> tells it which per-item slow paths to take.
/// </summary>
/// <remarks>Every member may be called from any thread (a collecting listener's, the registry's timer).</remarks>
internal interface IObservedScheduler
{
    /// <summary>The scheduler's name (the <c>priorityasync.context</c> tag).</summary>
    string Name { get; }

    /// <summary>The scheduler's kind (the <c>priorityasync.scheduler.kind</c> tag): <c>PriorityContext</c> or <c>PriorityThreadPool</c>.</summary>
    string Kind { get; }

    int Levels { get; }

    /// <summary>The frequency of the timestamps the scheduler records, ticks per second.</summary>
    long TimestampFrequency { get; }

    /// <summary>A timestamp of the scheduler's clock (<see cref="TimestampFrequency"/> ticks per second).</summary>
    long Timestamp();

    /// <summary>Items started at <paramref name="level"/> since the scheduler started.</summary>
    long GetRun(int level);

    /// <summary>Items queued at <paramref name="level"/> and not yet started.</summary>
    int GetQueued(int level);

    /// <summary>Items of <paramref name="level"/> running now, or -1 when the scheduler does not count them (the single loop, which runs
    /// at most one item: the gauge is the pool's).</summary>
    int GetRunning(int level);

    /// <summary>Publishes the bits of <see cref="SlowPaths"/> the scheduler must honour from its next item on (a hint: see ContextRegistry).</summary>
    void SetSlowPaths(int paths);

    /// <summary>Sets <see cref="SlowPaths.InspectOne"/> (interlocked: the threads clear it as they take it).</summary>
    void ArmInspectOne();

    /// <summary>Recomputes the slow paths after the inspector fell back to sampling (its budget for the period is spent).</summary>
    void StopInspectingAll();

    /// <summary>The scheduler's id in this process, given by the registry; the inspector's events carry it.</summary>
    int InspectorId { get; set; }

    /// <summary>The inspector's state while a session inspects; null otherwise.</summary>
    InspectorState? Inspection { get; set; }

    /// <summary>The number of threads: 1 for a single loop.</summary>
    int Threads { get; }

    /// <summary>Items the thread of index <paramref name="thread"/> has started (any thread, a moment's value).</summary>
    long ThreadDispatchCount(int thread);

    /// <summary>Whether the thread of index <paramref name="thread"/> is parked (idle).</summary>
    bool IsThreadParked(int thread);

    /// <summary>The thread of index <paramref name="thread"/>, or null before it started.</summary>
    Thread? GetThread(int thread);

    /// <summary>The policy, as its <c>ToString</c> names it.</summary>
    string PolicyName { get; }

    /// <summary>The time slice, or null when off.</summary>
    TimeSpan? TimeSliceSetting { get; }

    /// <summary>The stall timeout, or null when off.</summary>
    TimeSpan? StallTimeoutSetting { get; }

    /// <summary>Loop timers and delays armed now (takes the timer lock).</summary>
    int ArmedTimers { get; }
}
