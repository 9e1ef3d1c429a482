using System;
using System.Diagnostics;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>One variant of a custom (Stopwatch) harness: percentiles of a latency in microseconds, and a throughput where it applies.</summary>
public sealed record HarnessResult(string Group, string Name, int Samples, double P50Us, double P90Us, double P99Us, double MaxUs, double? ItemsPerSecond, string? Note = null, double? OnCpuItemsPerSecond = null)
{
    public static HarnessResult FromTicks(string group, string name, long[] ticks, int count, double? itemsPerSecond, string? note = null)
    {
        if (count == 0)
        {
            return new HarnessResult(group, name, 0, double.NaN, double.NaN, double.NaN, double.NaN, itemsPerSecond, note);
        }

        long[] sorted = ticks[..count];
        Array.Sort(sorted);
        return new HarnessResult(group, name, count, Us(Percentile(sorted, 0.50)), Us(Percentile(sorted, 0.90)), Us(Percentile(sorted, 0.99)), Us(sorted[^1]), itemsPerSecond, note);
    }

    public static double Us(long ticks) => ticks * 1_000_000.0 / Stopwatch.Frequency;

    private static long Percentile(long[] sorted, double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];
}
