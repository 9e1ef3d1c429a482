namespace PriorityAsync.Inspector;

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
