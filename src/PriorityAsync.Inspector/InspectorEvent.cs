namespace PriorityAsync.Inspector;

/// <summary>A fault, drop, escaped exception or stall, as it happened.</summary>
/// <param name="Kind"><c>fault</c>, <c>drop</c>, <c>exception</c> or <c>stall</c>.</param>
internal sealed record InspectorEvent(double AtSeconds, string Kind, string Scheduler, int Level, string Method, string Detail);
