using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Text;
using PriorityAsync.Benchmarks.Harness;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>Writes the run's results as a self-contained SVG: one panel per benchmark, shorter bars are better.</summary>
public static class Chart
{
    private const int Width = 1120;
    private const int LabelWidth = 430;
    private const int BarArea = 420;
    private const int RowHeight = 20;
    private const int PanelGap = 22;
    private const string Ours = "#e8710a";
    private const string Baseline = "#6b8fb3";

    public static void Write(string path, KeyRatios report, bool quick, DateTime runAtUtc)
    {
        var panels = new List<(string Title, string Unit, double? Goal, List<(string Label, double Value, string Text, bool IsOurs)> Bars)>();
        foreach (IGrouping<string, Measurement> group in report.Measurements.GroupBy(m => m.Category + "|" + m.Parameters))
        {
            Measurement first = group.First();
            string title = first.Category switch
            {
                "Await" => "Same-thread await (ns/op)",
                "PostDrain" => "Post + drain from the loop thread (ns/item)",
                "Streaming" => $"Cross-thread streaming, {first.Parameters.Replace("Producers=", "", StringComparison.Ordinal)} producer(s) (ns/item)",
                "PingPong" => "Ping-pong between two async loops (ns/hop)",
                "TaskScheduler" => "TaskScheduler adapter: StartNew + await (ns/op)",
                _ => first.Category,
            };
            double? goal = first.Category switch
            {
                "Await" => 30,              // <= 30 ns/op
                "PostDrain" => 1e9 / 30e6,  // >= 30 M items/s
                "Streaming" => 1e9 / 10e6,  // >= 10 M items/s
                "PingPong" => 1e9 / 10e6,   // >= 10 M hops/s
                _ => null,
            };
            panels.Add((title, "ns", goal, group
                .Select(m => (m.Description, m.MedianNs, F($"{m.MedianNs:F1} ns, {FormatBytes(m.BytesPerOp)} B"), m.Description.StartsWith("PriorityAsync", StringComparison.Ordinal)))
                .ToList()));
        }

        List<HarnessResult> wake = report.Harness.Where(h => h.Group == "Wake-up").ToList();
        if (wake.Count > 0)
        {
            panels.Add(("Wake-up latency of a parked receiver, p50 (us)", "us", 5.0, wake
                .Select(h => (h.Name, h.P50Us, F($"p50 {h.P50Us:F1} us, p99 {h.P99Us:F1} us"), h.Name.StartsWith("PriorityContext", StringComparison.Ordinal)))
                .ToList()));
        }

        List<HarnessResult> load = report.Harness.Where(h => h.Group is "Priority" or PriorityUnderLoad.UndisturbedGroup).ToList();
        if (load.Count > 0)
        {
            panels.Add((F($"Priority under load: high-level p99 wait (us; one low item = {PriorityUnderLoad.ItemDurationUs} us, log scale)"), "us-log", PriorityUnderLoad.ItemDurationUs, load
                .Select(h => (h.Name, h.P99Us, h.ItemsPerSecond is { } ips ? F($"p99 {h.P99Us:F1} us, {ips / 1e3:F0} k items/s") : F($"p99 {h.P99Us:F1} us (n={h.Samples})"), h.Name.StartsWith("PriorityAsync 2", StringComparison.Ordinal)))
                .ToList()));
        }

        int height = 70 + panels.Sum(p => 26 + (p.Bars.Count * RowHeight) + PanelGap) + 20;
        var svg = new StringBuilder();
        svg.AppendLine(F($"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{height}\" viewBox=\"0 0 {Width} {height}\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">"));
        svg.AppendLine(F($"<rect width=\"{Width}\" height=\"{height}\" fill=\"white\"/>"));
        svg.AppendLine(F($"<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">PriorityAsync vs baselines, one run{(quick ? " (--quick: in-process, short job; indicative only)" : "")}</text>"));
        svg.AppendLine(F($"<text x=\"16\" y=\"46\" fill=\"#444\">Shorter bars are better (medians). <tspan fill=\"{Ours}\" font-weight=\"bold\">PriorityAsync</tspan> vs <tspan fill=\"{Baseline}\" font-weight=\"bold\">baselines</tspan>; each panel has its own scale; <tspan fill=\"#c0392b\">dashed: issue 3's goal</tspan>. {Environment.ProcessorCount} cores, .NET {Environment.Version}, {runAtUtc:yyyy-MM-dd HH:mm} UTC.</text>"));
        int y = 70;
        foreach ((string title, string unit, double? goal, List<(string Label, double Value, string Text, bool IsOurs)> bars) in panels)
        {
            svg.AppendLine(F($"<text x=\"16\" y=\"{y + 14}\" font-size=\"13\" font-weight=\"bold\">{Escape(title)}</text>"));
            y += 26;
            bool log = unit == "us-log";
            double max = Math.Max(bars.Max(b => b.Value), goal ?? 0);
            double min = Math.Max(Math.Min(bars.Min(b => b.Value), goal ?? double.MaxValue), 1e-3);
            double Fraction(double value) => log
                ? (Math.Log10(value / (min / 2)) / Math.Log10(max / (min / 2)))
                : value / max;
            if (goal is { } goalValue)
            {
                double x = LabelWidth + (Fraction(goalValue) * BarArea);
                int bottom = y + (bars.Count * RowHeight);
                svg.AppendLine(F($"<line x1=\"{x:F1}\" y1=\"{y - 4}\" x2=\"{x:F1}\" y2=\"{bottom}\" stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>"));
                svg.AppendLine(F($"<text x=\"{x + 4:F1}\" y=\"{bottom + 10}\" fill=\"#c0392b\" font-size=\"11\">goal</text>"));
            }

            foreach ((string label, double value, string text, bool isOurs) in bars)
            {
                double fraction = Fraction(value);
                double barWidth = Math.Max(2, fraction * BarArea);
                string color = isOurs ? Ours : Baseline;
                svg.AppendLine(F($"<text x=\"{LabelWidth - 8}\" y=\"{y + 14}\" text-anchor=\"end\"{(isOurs ? " font-weight=\"bold\"" : "")}>{Escape(label)}</text>"));
                svg.AppendLine(F($"<rect x=\"{LabelWidth}\" y=\"{y + 3}\" width=\"{barWidth:F1}\" height=\"{RowHeight - 6}\" fill=\"{color}\"/>"));
                svg.AppendLine(F($"<text x=\"{LabelWidth + barWidth + 6:F1}\" y=\"{y + 14}\" fill=\"#222\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">{Escape(text)}</text>"));
                y += RowHeight;
            }

            y += PanelGap;
        }

        svg.AppendLine("</svg>");
        string? directory = Path.GetDirectoryName(Path.GetFullPath(path));
        if (directory is not null)
        {
            Directory.CreateDirectory(directory);
        }

        File.WriteAllText(path, svg.ToString());
    }

    private static string FormatBytes(double? bytes) => bytes switch
    {
        null => "?",
        < 0.005 => "0",
        < 10 => F($"{bytes:F2}"),
        _ => F($"{bytes:F0}"),
    };

    private static string Escape(string text) => WebUtility.HtmlEncode(text);

    private static string F(FormattableString value) => value.ToString(CultureInfo.InvariantCulture);
}
