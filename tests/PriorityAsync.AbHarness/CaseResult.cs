namespace PriorityAsync.AbHarness;

/// <summary>One measured figure of one case in one process: what a child prints (one JSON line each) and the driver aggregates.</summary>
/// <param name="Case">The case, e.g. <c>post-drain</c>.</param>
/// <param name="Variant"><c>plain</c> (no AsyncLocal set) or <c>asynclocal</c> (one AsyncLocal value set around the work).</param>
/// <param name="Metric">What <paramref name="Value"/> is, e.g. <c>ns/item</c>, <c>p50 us</c>, <c>B/item</c>.</param>
/// <param name="Value">The figure: for a throughput case the median of the process's rounds.</param>
/// <param name="LowerIsBetter">Whether a smaller value is better (true for every time and allocation).</param>
public sealed record CaseResult(string Case, string Variant, string Metric, double Value, bool LowerIsBetter = true);
