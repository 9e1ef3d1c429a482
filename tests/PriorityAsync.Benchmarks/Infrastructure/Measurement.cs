using System.Collections.Generic;
using System.Linq;
using System.Text.Json.Serialization;
using BenchmarkDotNet.Reports;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>One BenchmarkDotNet result, per operation (OperationsPerInvoke already divided out).</summary>
/// <remarks>A <c>--quick</c> run measures everything several times (short runs, one after another); its figure is then the median of
/// the runs' medians, and <see cref="RunMediansNs"/> keeps each run's, for the spread.</remarks>
public sealed record Measurement(string Category, string Method, string Description, string Parameters, double MeanNs, double MedianNs, double StdDevNs, double? BytesPerOp, double[]? RunMediansNs = null)
{
    /// <summary>One measurement per key from several runs: the median of the runs' medians (and of their means, deviations and bytes),
    /// with each run's median kept in <see cref="RunMediansNs"/>. A key missing from some run is aggregated over the runs that have it.</summary>
    public static List<Measurement> Aggregate(IReadOnlyList<IReadOnlyList<Measurement>> runs)
    {
        var keys = runs.SelectMany(r => r).Select(m => m.Key).Distinct().ToList();
        var result = new List<Measurement>();
        foreach (string key in keys)
        {
            Measurement[] all = runs.Select(r => r.FirstOrDefault(m => m.Key == key)).Where(m => m is not null).ToArray()!;
            double[] bytes = all.Where(m => m.BytesPerOp is not null).Select(m => m.BytesPerOp!.Value).ToArray();
            result.Add(all[0] with
            {
                MeanNs = Median(all.Select(m => m.MeanNs)),
                MedianNs = Median(all.Select(m => m.MedianNs)),
                StdDevNs = Median(all.Select(m => m.StdDevNs)),
                BytesPerOp = bytes.Length == 0 ? null : Median(bytes),
                RunMediansNs = all.Select(m => m.MedianNs).ToArray(),
            });
        }

        return result;
    }

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    /// <summary>Per second, from the median (robust against the other tenants of a shared machine).</summary>
    [JsonIgnore]
    public double OpsPerSecond => 1e9 / MedianNs;

    [JsonIgnore]
    public string Key => Parameters.Length == 0 ? Method : $"{Method}({Parameters})";

    public static IEnumerable<Measurement> FromSummaries(IEnumerable<Summary> summaries)
    {
        foreach (Summary summary in summaries)
        {
            foreach (BenchmarkReport report in summary.Reports)
            {
                if (report.ResultStatistics is not { } statistics)
                {
                    continue; // failed: BenchmarkDotNet has printed why
                }

                var descriptor = report.BenchmarkCase.Descriptor;
                long? bytes = report.GcStats.GetBytesAllocatedPerOperation(report.BenchmarkCase);
                long? total = report.GcStats.GetTotalAllocatedBytes(excludeAllocationQuantumSideEffects: true);
                double? exactBytes = report.GcStats.TotalOperations > 0 && total is { } t ? (double)t / report.GcStats.TotalOperations : bytes;
                yield return new Measurement(
                    descriptor.Categories.FirstOrDefault() ?? "",
                    descriptor.WorkloadMethod.Name,
                    descriptor.WorkloadMethodDisplayInfo.Trim('\''),
                    string.Join(",", report.BenchmarkCase.Parameters.Items.Select(p => $"{p.Name}={p.Value}")),
                    statistics.Mean,
                    statistics.Median,
                    statistics.StandardDeviation,
                    exactBytes);
            }
        }
    }
}
