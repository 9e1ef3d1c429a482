namespace PriorityAsync.Inspector;

/// <summary>One escalation: the raised work, from its own level to the level it runs at, why (<c>join</c>, <c>lock</c>, <c>owner</c>;
/// null when it was raised before the session) and by whom, how long it has been (or was) raised, and since when.</summary>
internal sealed record EscalationSnapshot(string Work, int FromLevel, int ToLevel, string? Cause, string? By, double RaisedForMs, double SinceSeconds);
