using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.Json;

namespace PriorityAsync.AbHarness;

/// <summary>
/// Runs the two built sides in alternating processes (A, B, A, B, ...), collects every figure of every process, and reports per figure
/// each side's median over its processes with the range, the ratio B/A of the medians, and the range of the ratio over the A-B pairs.
/// </summary>
public static class Driver
{
    private static IReadOnlyList<string> s_attachArguments = [];

    /// <summary>Runs <paramref name="processes"/> processes per side; the child arguments are passed through.</summary>
    /// <remarks>With <paramref name="attachB"/> (the inspector's PriorityAsync.Inspector.dll), every B process waits for the inspector,
    /// which the driver attaches to it (recording to a scratch file, no view), before it measures: A = not inspected, B = inspected.</remarks>
    public static int Run(string outDir, int processes, IReadOnlyList<string> childArguments, TextWriter output, string? attachB = null, IReadOnlyList<string>? attachArguments = null)
    {
        s_attachArguments = attachArguments ?? [];
        string[] sides = ["A", "B"];
        var results = new Dictionary<string, List<List<CaseResult>>> { ["A"] = [], ["B"] = [] };
        foreach (string side in sides)
        {
            if (!File.Exists(SideBuilder.HarnessDll(outDir, side)))
            {
                throw new ArgumentException($"Side {side} is not built in '{outDir}': run the build command first (README.md).");
            }
        }

        var stopwatch = Stopwatch.StartNew();
        for (int i = 0; i < processes; i++)
        {
            foreach (string side in sides)
            {
                List<CaseResult> run = RunChild(outDir, side, childArguments, side == "B" ? attachB : null);
                results[side].Add(run);
                output.WriteLine($"  process {i + 1}/{processes} {side}: " +
                    string.Join("  ", run.Where(r => r.Metric is "ns/item" or "p50 us").Select(r => $"{r.Case}/{r.Variant} {r.Value:F1}")));
            }
        }

        string report = Report(outDir, processes, childArguments, results, stopwatch.Elapsed);
        output.Write(report);
        string path = Path.Combine(outDir, "ab-report.md");
        File.WriteAllText(path, report);
        File.WriteAllText(Path.Combine(outDir, "ab-results.json"), JsonSerializer.Serialize(results));
        output.WriteLine($"Written to {path} and ab-results.json beside it.");
        return 0;
    }

    private static List<CaseResult> RunChild(string outDir, string side, IReadOnlyList<string> childArguments, string? inspector)
    {
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true };
        start.ArgumentList.Add(SideBuilder.HarnessDll(outDir, side));
        start.ArgumentList.Add("cases");
        start.ArgumentList.Add("--json");
        foreach (string argument in childArguments)
        {
            start.ArgumentList.Add(argument);
        }

        // Stable code across processes: no precompiled (ReadyToRun) framework code, whose tier-up timing made the same case differ by 2-3x
        // between processes (Yield: 70 to 205 ns/item), and tier-1 code sooner (no 100 ms call-counting delay), so the warm-up rounds
        // reach the optimized, profile-guided code. Measured on this harness: process-to-process spread within 5% with both set.
        start.Environment["DOTNET_ReadyToRun"] = "0";
        start.Environment["DOTNET_TC_CallCountingDelayMs"] = "0";
        if (inspector is not null)
        {
            start.Environment[InspectorGate.Variable] = "1";
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException("Could not start a child process.");
        using Process? attached = inspector is null ? null : Attach(inspector, process.Id, outDir);
        var results = new List<CaseResult>();
        string? line;
        while ((line = process.StandardOutput.ReadLine()) is not null)
        {
            if (line.StartsWith('{'))
            {
                results.Add(JsonSerializer.Deserialize<CaseResult>(line)!);
            }
            else
            {
                Console.WriteLine($"  [{side}] {line}");
            }
        }

        process.WaitForExit();
        if (attached is not null)
        {
            // The inspector ends by itself once its target has exited (exit code 6, "exited while attached"): that is expected.
            if (!attached.WaitForExit(30_000))
            {
                attached.Kill();
            }

            Console.WriteLine($"  [{side}] inspector: {attached.StandardError.ReadToEnd().Trim()}");
        }

        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"Side {side}'s process failed with exit code {process.ExitCode}.");
        }

        return results;
    }

    private static Process Attach(string inspector, int processId, string outDir)
    {
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true, RedirectStandardInput = true };
        start.ArgumentList.Add(inspector);
        start.ArgumentList.Add(processId.ToString(CultureInfo.InvariantCulture));
        start.ArgumentList.Add("--record");
        start.ArgumentList.Add(Path.Combine(outDir, "inspected.nettrace"));
        start.ArgumentList.Add("--no-view");
        start.ArgumentList.Add("--attach-timeout");
        start.ArgumentList.Add("60");
        foreach (string argument in s_attachArguments)
        {
            start.ArgumentList.Add(argument);
        }

        Process process = Process.Start(start) ?? throw new InvalidOperationException("Could not start the inspector.");
        process.OutputDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        return process;
    }

    private static string Report(string outDir, int processes, IReadOnlyList<string> childArguments, Dictionary<string, List<List<CaseResult>>> results, TimeSpan elapsed)
    {
        var text = new StringBuilder();
        string Input(string side)
        {
            string path = Path.Combine(outDir, side, "input.txt");
            return File.Exists(path) ? File.ReadAllText(path).Trim() : "?";
        }

        text.AppendLine(CultureInfo.InvariantCulture, $"A/B: A = {Input("A")}, B = {Input("B")}");
        text.AppendLine(CultureInfo.InvariantCulture, $"{processes} processes per side, alternating A, B; child arguments: {(childArguments.Count == 0 ? "(none)" : string.Join(' ', childArguments))}; {elapsed.TotalSeconds:F0} s");
        text.AppendLine("Each cell: the median over the processes [lowest .. highest]. B/A: ratio of the medians; pairs: B/A of each A-B pair, lowest .. highest.");
        text.AppendLine();
        text.AppendLine("| case | variant | metric | A | B | B/A | pairs |");
        text.AppendLine("|---|---|---|---|---|---|---|");
        IEnumerable<(string Case, string Variant, string Metric)> keys = results["A"].SelectMany(r => r)
            .Select(r => (r.Case, r.Variant, r.Metric)).Distinct();
        foreach ((string name, string variant, string metric) in keys)
        {
            double[] a = Values(results["A"], name, variant, metric);
            double[] b = Values(results["B"], name, variant, metric);
            double medianA = Stats.Median(a);
            double medianB = Stats.Median(b);
            double[] pairs = a.Zip(b, (x, y) => x == 0 ? double.NaN : y / x).Where(r => !double.IsNaN(r)).ToArray();
            string ratio = medianA == 0 ? "-" : (medianB / medianA).ToString("F2", CultureInfo.InvariantCulture);
            string pairRange = pairs.Length == 0 ? "-" : FormattableString.Invariant($"{pairs.Min():F2} .. {pairs.Max():F2}");
            text.AppendLine(CultureInfo.InvariantCulture, $"| {name} | {variant} | {metric} | {Cell(a)} | {Cell(b)} | {ratio} | {pairRange} |");
        }

        return text.ToString();
    }

    private static double[] Values(List<List<CaseResult>> runs, string name, string variant, string metric) =>
        runs.Select(run => run.FirstOrDefault(r => r.Case == name && r.Variant == variant && r.Metric == metric)?.Value ?? double.NaN)
            .ToArray();

    private static string Cell(double[] values)
    {
        double[] present = values.Where(v => !double.IsNaN(v)).ToArray();
        return present.Length == 0
            ? "-"
            : FormattableString.Invariant($"{Format(Stats.Median(present))} [{Format(present.Min())} .. {Format(present.Max())}]");
    }

    private static string Format(double value) =>
        Math.Abs(value) >= 100 ? value.ToString("F0", CultureInfo.InvariantCulture)
        : Math.Abs(value) >= 10 ? value.ToString("F1", CultureInfo.InvariantCulture)
        : value.ToString("F2", CultureInfo.InvariantCulture);
}
