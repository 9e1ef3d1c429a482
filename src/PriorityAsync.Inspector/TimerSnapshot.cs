namespace PriorityAsync.Inspector;

/// <summary>The latest loop timer that fired late.</summary>
internal sealed record TimerSnapshot(string Method, int Level, double LateMs, double AgoSeconds);
