using System.Collections.Generic;

namespace PriorityAsync.Inspector;

/// <summary>What the inspector knows at one moment: the view draws it, <c>--once --json</c> prints it. Immutable.</summary>
/// <param name="Schema">The snapshot's JSON schema version (docs/inspector.md).</param>
/// <param name="ProcessId">The target's process id.</param>
/// <param name="ProcessName">The target's process name.</param>
/// <param name="AttachedForSeconds">Seconds since the session started (of the recording, when replayed).</param>
/// <param name="WindowSeconds">The window the rates, percentiles and top callbacks cover.</param>
/// <param name="Schedulers">The schedulers, in the order they were first seen.</param>
/// <param name="Events">Faults, drops, escaped exceptions and stalls, newest last.</param>
/// <param name="Warnings">The warnings, newest last.</param>
/// <param name="LostEvents">Events the runtime dropped because the inspector read too slowly (0 normally).</param>
internal sealed record Snapshot(
    int Schema,
    int ProcessId,
    string ProcessName,
    double AttachedForSeconds,
    double WindowSeconds,
    IReadOnlyList<SchedulerSnapshot> Schedulers,
    IReadOnlyList<InspectorEvent> Events,
    IReadOnlyList<Warning> Warnings,
    long LostEvents);

/// <summary>One scheduler.</summary>
internal sealed record SchedulerSnapshot(
    int Id,
    string Name,
    string Kind,
    int Threads,
    int LevelCount,
    string Policy,
    double? TimeSliceMs,
    double? StallTimeoutMs,
    bool Running,
    bool ObservesEveryItem,
    int ArmedTimers,
    TimerSnapshot? LastLateTimer,
    IReadOnlyList<LevelSnapshot> Levels,
    IReadOnlyList<ThreadSnapshot> ThreadStates,
    IReadOnlyList<CallbackStats> TopCallbacks);

/// <summary>One level, highest first in <see cref="SchedulerSnapshot.Levels"/>.</summary>
/// <param name="WaitSource"><c>items</c> when the percentiles come from observed items' own queue waits, <c>probes</c> when from the
/// level's counters (the sample period is their resolution), null when there was nothing to measure.</param>
internal sealed record LevelSnapshot(
    int Level,
    int Queued,
    int? Running,
    long Started,
    double StartedPerSecond,
    double? WaitP50Ms,
    double? WaitP99Ms,
    string? WaitSource,
    double? RunP99Ms,
    double? OldestWaitMs);

/// <summary>What one thread does.</summary>
/// <param name="State"><c>idle</c>, <c>running</c> or <c>blocked</c> (in a synchronous wait).</param>
/// <param name="Method">The running item, when the inspector saw it start.</param>
/// <param name="Exact">Whether <see cref="RunningForMs"/> is the item's own run time (else a lower bound).</param>
internal sealed record ThreadSnapshot(int Thread, string State, int? Level, string? Method, double RunningForMs, bool Exact, long Dispatched);

/// <summary>One callback's observed runs over the window.</summary>
/// <param name="Sampled">Whether some of them were samples (the scheduler's rate was high): then the counts are of samples.</param>
internal sealed record CallbackStats(string Method, int Level, int Count, double TotalMs, double MaxMs, bool Sampled);

/// <summary>The latest loop timer that fired late.</summary>
internal sealed record TimerSnapshot(string Method, int Level, double LateMs, double AgoSeconds);

/// <summary>A fault, drop, escaped exception or stall, as it happened.</summary>
/// <param name="Kind"><c>fault</c>, <c>drop</c>, <c>exception</c> or <c>stall</c>.</param>
internal sealed record InspectorEvent(double AtSeconds, string Kind, string Scheduler, int Level, string Method, string Detail);

/// <summary>A warning: what happened, with names, and what to do.</summary>
/// <param name="Kind"><c>time-slice</c>, <c>starvation</c>, <c>late-timer</c>, <c>stall</c> or <c>blocked-thread</c>.</param>
/// <param name="Count">How many times it was seen (the same kind, scheduler, level and method count as one warning).</param>
internal sealed record Warning(
    double AtSeconds,
    string Kind,
    string Scheduler,
    int Level,
    string? Method,
    double DurationMs,
    string Message,
    string Advice,
    int Count);
