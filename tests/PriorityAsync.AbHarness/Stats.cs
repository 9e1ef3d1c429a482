using System;
using System.Collections.Generic;
using System.Linq;

namespace PriorityAsync.AbHarness;

/// <summary>Order statistics of a handful of samples (one per process or per round).</summary>
public static class Stats
{
    /// <summary>The median (the mean of the two middle values for an even count); NaN when empty.</summary>
    public static double Median(IEnumerable<double> values)
    {
        double[] sorted = values.Where(v => !double.IsNaN(v)).Order().ToArray();
        if (sorted.Length == 0)
        {
            return double.NaN;
        }

        int middle = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    /// <summary>The value below which <paramref name="fraction"/> of the sorted samples lie (nearest rank).</summary>
    public static double Percentile(double[] sorted, double fraction) =>
        sorted.Length == 0 ? double.NaN : sorted[Math.Clamp((int)Math.Ceiling(fraction * sorted.Length) - 1, 0, sorted.Length - 1)];

    /// <summary>Half the range around the median, as a fraction of the median: the spread the reports print as "+-x%".</summary>
    public static double RelativeHalfRange(IReadOnlyCollection<double> values)
    {
        double median = Median(values);
        return values.Count == 0 || median == 0 ? double.NaN : (values.Max() - values.Min()) / 2 / Math.Abs(median);
    }
}
