namespace PriorityAsync.Inspector;

/// <summary>A warning: what happened, with names, and what to do.</summary>
/// <param name="Kind"><c>time-slice</c>, <c>starvation</c>, <c>late-timer</c>, <c>stall</c>, <c>blocked-thread</c> or <c>long-lock-wait</c>.</param>
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
