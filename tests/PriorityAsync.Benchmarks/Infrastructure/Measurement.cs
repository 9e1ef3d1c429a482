using System.Collections.Generic;
using System.Linq;
using System.Text.Json.Serialization;
using BenchmarkDotNet.Reports;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>One BenchmarkDotNet result, per operation (OperationsPerInvoke already divided out).</summary>
public sealed record Measurement(string Category, string Method, string Description, string Parameters, double MeanNs, double MedianNs, double StdDevNs, double? BytesPerOp)
{
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
