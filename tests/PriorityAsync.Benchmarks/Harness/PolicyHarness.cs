using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// The policies under saturation (issue 12), Stopwatch timestamps in this process (<c>--policies</c>):
/// <list type="number">
/// <item>Split: three levels kept saturated (each level always has <see cref="InFlightPerLevel"/> items queued; an item busy-runs for
/// <see cref="SplitItemUs"/> us and queues itself again), for a number of seconds under each policy. Each level's run time (from
/// the previous item's end to the item's end, the span the weighted-shares policy charges) is summed per 1 s window; the table and the chart (<c>--policies-svg</c>) show each level's share of
/// each window. The goal for weighted shares 1:2:4: every window within 5 percentage points of 1/7, 2/7, 4/7.</item>
/// <item>Aging bound: a top level that never empties (each top item busy-runs <see cref="AgingItemUs"/> us and queues the next) and a
/// chain of lowest-level items (each queues the next when it runs), over <see cref="AgingItems"/> items in all. Measured: every lowest
/// level item's wait (its post to its start). The goal: the worst wait at most the bound plus one item's run time.</item>
/// </list>
/// Wall-clock measurements on a shared machine: a descheduled loop thread stretches whatever item is running (or the gap between two),
/// so the worst figures are reported together with the longest item and the longest gap between items seen in the same run.
/// </summary>
public static class PolicyHarness
{
    public const int Levels = 3;
    public const double SplitItemUs = 20;
    public const int InFlightPerLevel = 2;
    public const double AgingItemUs = 5;
    public const int AgingItems = 1_000_000;
    public static readonly TimeSpan AgingBound = TimeSpan.FromMilliseconds(1);
    public static readonly int[] Shares = [1, 2, 4];

    public static void Run(int seconds, string? svgPath, TextWriter output)
    {
        output.WriteLine();
        output.WriteLine($"== Policies under saturation ({Environment.ProcessorCount} cores, load {LoadAverage()}) ==");
        var splits = new List<SplitResult>();
        foreach ((string name, PriorityPolicy policy) in Policies())
        {
            SplitResult split = RunSplit(name, policy, seconds);
            splits.Add(split);
            PrintSplit(split, output);
        }

        PrintDispatchCost(output);

        AgingResult aging = RunAgingBound();
        PrintAging(aging, output);
        output.WriteLine($"(load {LoadAverage()} at the end)");
        if (svgPath is not null)
        {
            WriteSvg(svgPath, splits, DateTime.UtcNow);
            output.WriteLine($"Chart written to {Path.GetFullPath(svgPath)}");
        }
    }

    private static IEnumerable<(string Name, PriorityPolicy Policy)> Policies()
    {
        yield return ("Strict", PriorityPolicy.Strict);
        yield return ("Aging 50 ms", PriorityPolicy.Aging(TimeSpan.FromMilliseconds(50), TimeSpan.FromMilliseconds(50), TimeSpan.FromDays(1)));
        yield return ("WeightedShares 1:2:4", PriorityPolicy.WeightedShares(Shares));
    }

    // ---- Split ------------------------------------------------------------------------------------------------------------

    public sealed record SplitResult(string Name, PriorityPolicy Policy, double[][] Windows, long Items, double LongestItemUs, double[] LongestPerWindowUs);

    private static SplitResult RunSplit(string name, PriorityPolicy policy, int seconds)
    {
        long windowTicks = Stopwatch.Frequency;
        long spinTicks = (long)(SplitItemUs * Stopwatch.Frequency / 1e6);
        long[][] perWindow = Enumerable.Range(0, seconds).Select(_ => new long[Levels]).ToArray();
        long[] longestPerWindow = new long[seconds];
        long items = 0;
        long longest = 0;
        long start = 0;
        long end = 0;
        long lastEnd = 0;
        PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                start = Stopwatch.GetTimestamp();
                end = start + (seconds * windowTicks);
                for (int level = 0; level < Levels; level++)
                {
                    SynchronizationContext sc = context.GetSynchronizationContext(level);
                    int myLevel = level;
                    SendOrPostCallback? item = null;
                    item = _ =>
                    {
                        long t0 = Stopwatch.GetTimestamp();
                        long t1 = Spin(t0, spinTicks);
                        long window = (t0 - start) / windowTicks;
                        if (window < seconds && lastEnd != 0)
                        {
                            // From the previous item's end, as the policy charges it: the dispatch, and any time the thread lost
                            // its core between two items, count for this item's level.
                            perWindow[window][myLevel] += t1 - lastEnd;
                            longest = Math.Max(longest, t1 - lastEnd);
                            longestPerWindow[window] = Math.Max(longestPerWindow[window], t1 - lastEnd);
                            items++;
                        }

                        lastEnd = t1;

                        if (t1 < end)
                        {
                            sc.Post(item!, null);
                        }
                    };
                    for (int i = 0; i < InFlightPerLevel; i++)
                    {
                        sc.Post(item, null);
                    }
                }
            },
            new PriorityContextOptions { Levels = Levels, Policy = policy, Name = name });

        double[][] shares = perWindow.Select(w => w.Select(t => w.Sum() == 0 ? 0 : t / (double)w.Sum()).ToArray()).ToArray();
        return new SplitResult(name, policy, shares, items, longest * 1e6 / Stopwatch.Frequency, longestPerWindow.Select(t => t * 1e6 / Stopwatch.Frequency).ToArray());
    }

    private static void PrintSplit(SplitResult split, TextWriter output)
    {
        output.WriteLine();
        output.WriteLine($"### {split.Name}: share of run time per 1 s window (levels 0 / 1 / 2), {split.Items:N0} items of {SplitItemUs} us, longest item {split.LongestItemUs:F0} us");
        output.WriteLine();
        output.WriteLine("| window | level 0 | level 1 | level 2 | longest item (with its dispatch) |");
        output.WriteLine("|---:|---:|---:|---:|---:|");
        for (int w = 0; w < split.Windows.Length; w++)
        {
            output.WriteLine($"| {w + 1} | {Pct(split.Windows[w][0])} | {Pct(split.Windows[w][1])} | {Pct(split.Windows[w][2])} | {split.LongestPerWindowUs[w] / 1000:F1} ms |");
        }

        if (split.Policy is WeightedSharesPriorityPolicy weighted)
        {
            double total = weighted.SharesPerLevel.Sum();
            double worst = 0;
            for (int level = 0; level < Levels; level++)
            {
                double target = weighted.SharesPerLevel[level] / total;
                worst = Math.Max(worst, split.Windows.Max(w => Math.Abs(w[level] - target)));
            }

            output.WriteLine();
            output.WriteLine($"Targets {string.Join(" / ", weighted.SharesPerLevel.Select(s => Pct(s / total)))}; worst deviation over every window and level: " +
                             $"{worst * 100:F2} percentage points (goal: at most 5) -> {(worst <= 0.05 ? "met" : "MISSED")}");
        }
    }

    // ---- Dispatch cost ----------------------------------------------------------------------------------------------------

    /// <summary>What each policy costs per item: the loop posts <c>Batch</c> empty callbacks spread over the three levels and runs them
    /// all, repeated, under each policy in turn (rounds interleaved, so a change in the machine's load hits all alike); the median round.
    /// Every dispatch then has several levels to choose from, the case where aging reads the clock and peeks, and shares always read
    /// the clock.</summary>
    private static void PrintDispatchCost(TextWriter output)
    {
        const int Batch = 30_000;
        const int Rounds = 15;
        var policies = new (string Name, PriorityPolicy Policy)[]
        {
            ("Strict", PriorityPolicy.Strict),
            ("Aging", PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1))),
            ("WeightedShares 1:2:4", PriorityPolicy.WeightedShares(Shares)),
        };
        var perItem = policies.Select(_ => new List<double>()).ToArray();
        var loops = policies.Select(p => new PriorityContextThread(new PriorityContextOptions { Levels = Levels, Policy = p.Policy, Name = p.Name })).ToArray();
        try
        {
            // Two warm-up rounds per loop (JIT, and each level's queue growing to the batch once), then the measured rounds.
            for (int round = -2; round < Rounds; round++)
            {
                for (int p = 0; p < policies.Length; p++)
                {
                    double ns = PostAndDrain(loops[p].Context, Batch);
                    if (round >= 0)
                    {
                        perItem[p].Add(ns);
                    }
                }
            }
        }
        finally
        {
            foreach (PriorityContextThread loop in loops)
            {
                loop.Dispose();
            }
        }

        output.WriteLine();
        output.WriteLine($"### Dispatch cost: post + run of {Batch:N0} empty callbacks over 3 levels from the loop thread, median of {Rounds} rounds");
        output.WriteLine();
        output.WriteLine("| policy | ns per item (median) | min | vs strict |");
        output.WriteLine("|---|---:|---:|---:|");
        double strict = Median(perItem[0]);
        for (int p = 0; p < policies.Length; p++)
        {
            output.WriteLine($"| {policies[p].Name} | {Median(perItem[p]):F1} | {perItem[p].Min():F1} | {Median(perItem[p]) / strict:F2}x |");
        }

        static double Median(List<double> values) => values.OrderBy(v => v).ElementAt(values.Count / 2);
    }

    /// <summary>From the loop thread: posts <paramref name="batch"/> empty callbacks round-robin over the levels; the time from the
    /// first post to the end of the last of them to run, per item.</summary>
    private static double PostAndDrain(PriorityContext context, int batch)
    {
        using var done = new ManualResetEventSlim(false);
        SynchronizationContext[] sc = Enumerable.Range(0, Levels).Select(context.GetSynchronizationContext).ToArray();
        int ran = 0;
        long t0 = 0;
        long t1 = 0;
        SendOrPostCallback count = _ =>
        {
            if (++ran == batch)
            {
                t1 = Stopwatch.GetTimestamp();
                done.Set();
            }
        };
        sc[Levels - 1].Post(_ =>
        {
            t0 = Stopwatch.GetTimestamp();
            for (int i = 0; i < batch; i++)
            {
                sc[i % Levels].Post(count, null);
            }
        }, null);
        done.Wait();
        return (t1 - t0) * 1e9 / Stopwatch.Frequency / batch;
    }

    // ---- Aging bound ------------------------------------------------------------------------------------------------------

    public sealed record AgingResult(
        long Items, long LowItems, double WorstWaitUs, double P99WaitUs, double LongestItemUs, double LongestGapUs, int OverBoundPlusItem,
        int OverBoundPlusNominalItem, long MostTopItemsSurelyAfterDeadline, long MostTopItemsMaybeAfterDeadline);

    private static AgingResult RunAgingBound()
    {
        long spinTicks = (long)(AgingItemUs * Stopwatch.Frequency / 1e6);
        long boundTicks = (long)(AgingBound.TotalSeconds * Stopwatch.Frequency);
        var waits = new List<long>(AgingItems / 100);
        long items = 0;
        long longestItem = 0;
        long longestGap = 0;
        long lastEnd = 0;
        bool stop = false;

        // The sequence check (A1), immune to the thread losing its core: once the pending lowest-level item's deadline has passed, at
        // most one top item may still start before it (the one being dispatched at that moment). The library stamps the item inside
        // Post, so its deadline lies between two deadlines computed from stamps taken just before and just after the Post: top items
        // starting after the later one surely started after the library's deadline (a count never above the true one: over 1 proves a
        // violation), those after the earlier one maybe did (never below the true one: at most 1 proves the rule held).
        long earliestDeadline = long.MaxValue;
        long latestDeadline = long.MaxValue;
        long topSurely = 0;
        long topMaybe = 0;
        long mostTopSurely = 0;
        long mostTopMaybe = 0;
        PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                SynchronizationContext top = context.GetSynchronizationContext(2);
                SynchronizationContext low = context.GetSynchronizationContext(0);
                SendOrPostCallback? topItem = null;
                SendOrPostCallback? lowItem = null;
                topItem = _ =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    if (lastEnd != 0)
                    {
                        longestGap = Math.Max(longestGap, t0 - lastEnd);
                    }

                    if (t0 > earliestDeadline)
                    {
                        topMaybe++;
                        if (t0 > latestDeadline)
                        {
                            topSurely++;
                        }
                    }

                    long t1 = Spin(t0, spinTicks);
                    longestItem = Math.Max(longestItem, t1 - t0);
                    stop = ++items >= AgingItems;
                    if (!stop)
                    {
                        top.Post(topItem!, null);
                    }

                    lastEnd = Stopwatch.GetTimestamp();
                };
                lowItem = state =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    waits.Add(t0 - (long)state!);
                    longestGap = Math.Max(longestGap, t0 - lastEnd);
                    mostTopSurely = Math.Max(mostTopSurely, topSurely);
                    mostTopMaybe = Math.Max(mostTopMaybe, topMaybe);
                    topSurely = 0;
                    topMaybe = 0;
                    long t1 = Spin(t0, spinTicks);
                    longestItem = Math.Max(longestItem, t1 - t0);
                    items++;
                    if (!stop)
                    {
                        long postedAt = Stopwatch.GetTimestamp();
                        earliestDeadline = postedAt + boundTicks;
                        latestDeadline = long.MaxValue;
                        low.Post(lowItem!, postedAt);
                        latestDeadline = Stopwatch.GetTimestamp() + boundTicks;
                    }

                    lastEnd = Stopwatch.GetTimestamp();
                };
                top.Post(topItem, null);
                long firstPostedAt = Stopwatch.GetTimestamp();
                earliestDeadline = firstPostedAt + boundTicks;
                low.Post(lowItem, firstPostedAt);
                latestDeadline = Stopwatch.GetTimestamp() + boundTicks;
            },
            new PriorityContextOptions { Levels = Levels, Policy = PriorityPolicy.Aging(AgingBound, TimeSpan.FromDays(1), TimeSpan.FromDays(1)), Name = "aging-bound" });

        long[] sorted = waits.Take(waits.Count - 1).OrderBy(w => w).ToArray(); // the last one ran after the top level stopped
        double us = 1e6 / Stopwatch.Frequency;
        int over = sorted.Count(w => w > boundTicks + longestItem);
        int overNominal = sorted.Count(w => w > boundTicks + spinTicks + (spinTicks / 5));
        return new AgingResult(
            items, sorted.Length, sorted[^1] * us, sorted[(int)(sorted.Length * 0.99)] * us, longestItem * us, longestGap * us, over, overNominal, mostTopSurely, mostTopMaybe);
    }

    private static void PrintAging(AgingResult r, TextWriter output)
    {
        double bound = AgingBound.TotalMilliseconds * 1000;
        output.WriteLine();
        output.WriteLine($"### Aging: the lowest level under a top level that never empties (bound {bound:F0} us, items of {AgingItemUs} us, {r.Items:N0} items)");
        output.WriteLine();
        output.WriteLine("| lowest-level items | p99 wait | worst wait | bound + longest item | longest item | longest gap between items | waits over bound + longest item |");
        output.WriteLine("|---:|---:|---:|---:|---:|---:|---:|");
        output.WriteLine($"| {r.LowItems:N0} | {r.P99WaitUs:F1} us | {r.WorstWaitUs:F1} us | {bound + r.LongestItemUs:F1} us | {r.LongestItemUs:F1} us | {r.LongestGapUs:F1} us | {r.OverBoundPlusItem} |");
        output.WriteLine();
        output.WriteLine($"Goal: worst wait <= bound + one item's run time -> {(r.OverBoundPlusItem == 0 ? "met" : "MISSED")} (worst {r.WorstWaitUs:F1} us against {bound + r.LongestItemUs:F1} us, the longest item as measured)");
        output.WriteLine($"Against the nominal item ({AgingItemUs} us, +20%): {r.OverBoundPlusNominalItem:N0} of {r.LowItems:N0} waits over {bound + (AgingItemUs * 1.2):F0} us (beyond it either the loop thread lost its core or the rule broke: the sequence check below tells which)");
        string verdict = r.MostTopItemsMaybeAfterDeadline <= 1 ? "met" : r.MostTopItemsSurelyAfterDeadline > 1 ? "MISSED" : "not decided (the thread lost its core inside a Post)";
        output.WriteLine($"Sequence check (A1, immune to descheduling): top items that started after a lowest-level item's deadline and before it, worst case: " +
                         $"surely {r.MostTopItemsSurelyAfterDeadline}, at most {r.MostTopItemsMaybeAfterDeadline} (allowed: 1) -> {verdict}");
    }

    // ---- Helpers ----------------------------------------------------------------------------------------------------------

    private static long Spin(long from, long ticks)
    {
        long now;
        do
        {
            now = Stopwatch.GetTimestamp();
        }
        while (now - from < ticks);
        return now;
    }

    private static string Pct(double share) => (share * 100).ToString("F1", CultureInfo.InvariantCulture) + "%";

    private static string LoadAverage()
    {
        try
        {
            return File.ReadAllText("/proc/loadavg").Split(' ')[0];
        }
        catch (IOException)
        {
            return "n/a";
        }
    }

    /// <summary>One panel per policy: a stacked bar per 1 s window (level 0 bottom, level 2 top), the weighted-shares targets dashed.</summary>
    private static void WriteSvg(string path, List<SplitResult> splits, DateTime runAtUtc)
    {
        const int PanelWidth = 300;
        const int PanelHeight = 200;
        const int Left = 50;
        const int Top = 60;
        const int Gap = 40;
        string[] colors = ["#6b8fb3", "#9bc27a", "#e8710a"];
        int width = Left + (splits.Count * (PanelWidth + Gap)) + 20;
        int height = Top + PanelHeight + 80;
        var svg = new StringBuilder();
        svg.Append(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n");
        svg.Append(CultureInfo.InvariantCulture, $"<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Share of run time per level, three levels saturated ({SplitItemUs} us items), each bar one 1 s window</text>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left}\" y=\"40\" fill=\"#555\">Measured {runAtUtc:yyyy-MM-dd HH:mm} UTC by tests/PriorityAsync.Benchmarks --policies ({Environment.ProcessorCount} cores, shared machine)</text>\n");
        for (int p = 0; p < splits.Count; p++)
        {
            SplitResult split = splits[p];
            int x0 = Left + (p * (PanelWidth + Gap));
            double barWidth = PanelWidth / (double)split.Windows.Length;
            for (int w = 0; w < split.Windows.Length; w++)
            {
                double y = Top + PanelHeight;
                for (int level = 0; level < Levels; level++)
                {
                    double h = split.Windows[w][level] * PanelHeight;
                    y -= h;
                    svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{x0 + (w * barWidth) + 1:F1}\" y=\"{y:F1}\" width=\"{barWidth - 2:F1}\" height=\"{h:F1}\" fill=\"{colors[level]}\"/>\n");
                }
            }

            if (split.Policy is WeightedSharesPriorityPolicy weighted)
            {
                double total = weighted.SharesPerLevel.Sum();
                double cumulative = 0;
                for (int level = 0; level < Levels - 1; level++)
                {
                    cumulative += weighted.SharesPerLevel[level] / total;
                    double y = Top + PanelHeight - (cumulative * PanelHeight);
                    svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{x0}\" x2=\"{x0 + PanelWidth}\" y1=\"{y:F1}\" y2=\"{y:F1}\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n");
                }
            }

            svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{x0}\" y=\"{Top}\" width=\"{PanelWidth}\" height=\"{PanelHeight}\" fill=\"none\" stroke=\"#333\"/>\n");
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{x0 + (PanelWidth / 2)}\" y=\"{Top + PanelHeight + 20}\" text-anchor=\"middle\" font-weight=\"bold\">{split.Name}</text>\n");
            double[] mean = Enumerable.Range(0, Levels).Select(l => split.Windows.Average(w => w[l])).ToArray();
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{x0 + (PanelWidth / 2)}\" y=\"{Top + PanelHeight + 38}\" text-anchor=\"middle\" fill=\"#555\">mean {Pct(mean[0])} / {Pct(mean[1])} / {Pct(mean[2])}</text>\n");
        }

        int legendY = Top + PanelHeight + 62;
        for (int level = 0; level < Levels; level++)
        {
            int lx = Left + (level * 130);
            svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{lx}\" y=\"{legendY - 10}\" width=\"12\" height=\"12\" fill=\"{colors[level]}\"/><text x=\"{lx + 18}\" y=\"{legendY}\">level {level}</text>\n");
        }

        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left + 400}\" y=\"{legendY}\" fill=\"#555\">dashed: the 1:2:4 targets (1/7, 3/7 cumulative)</text>\n");
        svg.Append("</svg>\n");
        File.WriteAllText(path, svg.ToString());
    }
}
