namespace PriorityAsync.Inspector;

/// <summary>One escalation as the events told it: work raised from its own level to a higher one, why, by whom, and (once it ended)
/// until when. Times are the events' own (milliseconds since the session started).</summary>
/// <param name="StartMs">When it was raised: the end's time less how long the library says it stayed raised, else its start event's time.</param>
/// <param name="Cause"><c>join</c>, <c>lock</c> or <c>owner</c>; null when it was raised before the session (only its end was seen).</param>
/// <param name="By">Who waits on it (the start event's <c>by</c>); null as <paramref name="Cause"/>.</param>
/// <param name="EndMs">When it dropped back; null while it is in force.</param>
internal sealed record Escalation(double StartMs, string Work, int FromLevel, int ToLevel, string? Cause, string? By, double? EndMs = null);
