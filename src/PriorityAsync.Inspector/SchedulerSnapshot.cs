using System.Collections.Generic;

namespace PriorityAsync.Inspector;

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
    IReadOnlyList<CallbackStats> TopCallbacks,
    EscalationsSnapshot Escalations);
