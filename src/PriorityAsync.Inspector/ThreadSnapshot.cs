namespace PriorityAsync.Inspector;

/// <summary>What one thread does.</summary>
/// <param name="State"><c>idle</c>, <c>running</c> or <c>blocked</c> (in a synchronous wait).</param>
/// <param name="Method">The running item, when the inspector saw it start.</param>
/// <param name="Exact">Whether <see cref="RunningForMs"/> is the item's own run time (else a lower bound).</param>
internal sealed record ThreadSnapshot(int Thread, string State, int? Level, string? Method, double RunningForMs, bool Exact, long Dispatched);
