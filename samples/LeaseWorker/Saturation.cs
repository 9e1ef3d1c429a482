using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using PriorityAsync;

namespace LeaseWorker;

/// <summary>
/// <c>--saturate D</c>: the priority mode's three levels under a bulk load that never empties, once per policy (<c>--policies</c>).
/// For D (seed time) the processing level (1) always holds a bulk CPU slice (each slice queues the next before it ends); the receiving
/// level (0, the lowest) asks to run again as soon as it has run (a worker looking for its next message); the lease level (2) is
/// posted to every refresh delay from another thread. Measured: how long each lowest-level and lease-level item waited (its post to
/// its start), and how often the lowest level ran while the bulk was there.
/// </summary>
/// <remarks>
/// Under strict priority the lowest level never runs while the bulk is there: its one pending item waits for the whole saturation.
/// Aging bounds that wait (its bound plus one bulk slice); weighted shares give it run time in proportion to its shares. See
/// docs/concepts.md, "Policies".
/// </remarks>
public static class Saturation
{
    public static readonly IReadOnlyList<string> AllPolicies = ["strict", "aging", "shares"];

    /// <summary>The bulk slice when <c>--checkpoint</c> is off, in seed time.</summary>
    public static readonly TimeSpan DefaultSlice = TimeSpan.FromMilliseconds(100);

    /// <summary>The aging policy's bound for every level, in seed time.</summary>
    public static readonly TimeSpan AgingBound = TimeSpan.FromSeconds(1);

    /// <summary>The weighted-shares policy's shares: receiving, processing, lease.</summary>
    public static readonly int[] Shares = [1, 4, 16];

    /// <summary>One policy's run. Waits are in seed time (divided by the time scale).</summary>
    public sealed record Result(
        string Policy, string Description, int LowestRunsUnderBulk, TimeSpan LowestWorstWait, TimeSpan LowestMeanWait,
        int LeaseRuns, TimeSpan LeaseWorstWait, double BulkShare, TimeSpan LongestSlice);

    public static PriorityPolicy CreatePolicy(string name, Settings settings) => name switch
    {
        "aging" => PriorityPolicy.Aging(Enumerable.Repeat(settings.Scaled(AgingBound), 3).ToArray()),
        "shares" => PriorityPolicy.WeightedShares(Shares),
        _ => PriorityPolicy.Strict,
    };

    public static TimeSpan Slice(Settings settings) => settings.Checkpoint ?? DefaultSlice;

    public static Result Run(string policyName, Settings settings, TimeSpan saturation)
    {
        PriorityPolicy policy = CreatePolicy(policyName, settings);
        TimeSpan slice = settings.Scaled(Slice(settings));
        // Worst and total only: the lowest level may run a million times (a list of waits would make the GC part of the measurement).
        long lowestWorst = 0;
        long lowestTotal = 0;
        long lowestRuns = 0;
        var leaseWaits = new List<long>();
        int lowestUnderBulk = 0;
        long bulkTicks = 0;
        long longestSlice = 0;
        bool bulkRunning = true;
        long start = 0;
        long end = 0;
        using var stopLease = new ManualResetEventSlim(false);
        Thread? leasePoster = null;

        PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                SynchronizationContext bulk = context.GetSynchronizationContext(PriorityMode.ProcessingLevel);
                SynchronizationContext lowest = context.GetSynchronizationContext(PriorityMode.ReceivingLevel);
                SynchronizationContext lease = context.GetSynchronizationContext(PriorityMode.LeaseLevel);
                start = Stopwatch.GetTimestamp();
                end = start + Ticks(settings.Scaled(saturation));

                SendOrPostCallback? bulkSlice = null;
                bulkSlice = _ =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    if (t0 >= end)
                    {
                        Volatile.Write(ref bulkRunning, false);
                        return;
                    }

                    bulk.Post(bulkSlice!, null); // queued before the slice runs: the level never empties
                    CpuWork.Run(settings.CpuKind, slice);
                    long took = Stopwatch.GetTimestamp() - t0;
                    bulkTicks += took;
                    longestSlice = Math.Max(longestSlice, took);
                };

                SendOrPostCallback? lowestItem = null;
                lowestItem = state =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    long wait = t0 - (long)state!;
                    lowestWorst = Math.Max(lowestWorst, wait);
                    lowestTotal += wait;
                    lowestRuns++;
                    if (!bulkRunning)
                    {
                        return;
                    }

                    lowestUnderBulk++;
                    lowest.Post(lowestItem!, Stopwatch.GetTimestamp());
                };

                SendOrPostCallback leaseItem = state => leaseWaits.Add(Stopwatch.GetTimestamp() - (long)state!);
                leasePoster = new Thread(() =>
                {
                    TimeSpan every = settings.Scaled(settings.RefreshDelay);
                    while (!stopLease.Wait(every) && Volatile.Read(ref bulkRunning))
                    {
                        lease.Post(leaseItem, Stopwatch.GetTimestamp());
                    }
                })
                { IsBackground = true, Name = "lease refreshes" };

                bulk.Post(bulkSlice, null);
                lowest.Post(lowestItem, Stopwatch.GetTimestamp());
                leasePoster.Start(); // stops once the bulk has ended (a refresh posted after the loop finished is dropped)
            },
            new PriorityContextOptions { Levels = 3, Name = $"saturation-{policyName}", Policy = policy });
        stopLease.Set();
        leasePoster?.Join();

        double elapsed = Math.Max(1, end - start);
        return new Result(
            policyName,
            policy.ToString()!,
            lowestUnderBulk,
            SeedTime(lowestWorst, settings),
            SeedTime(lowestTotal / Math.Max(1, lowestRuns), settings),
            leaseWaits.Count,
            SeedTime(leaseWaits.Count == 0 ? 0 : leaseWaits.Max(), settings),
            bulkTicks / elapsed,
            SeedTime(longestSlice, settings));
    }

    public static void Write(TextWriter output, Settings settings, TimeSpan saturation, IReadOnlyList<Result> results)
    {
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Saturation for {Format.Duration(saturation)}: the processing level (1) never empties (CPU slices of {Format.Duration(Slice(settings))}, " +
            $"{settings.CpuKind.ToString().ToLowerInvariant()}); the receiving level (0, the lowest) asks again as soon as it ran; the lease level (2) " +
            $"every {Format.Duration(settings.RefreshDelay)}. Waits in the seed's time (as run: x {settings.TimeScale.ToString(CultureInfo.InvariantCulture)})."));
        output.WriteLine();
        output.WriteLine("| policy | lowest level: runs under the bulk | worst wait | mean wait | lease level: worst wait | bulk share of the run | longest bulk slice (wall) |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|");
        foreach (Result r in results)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {r.Description} | {r.LowestRunsUnderBulk:N0} | {Format.Duration(r.LowestWorstWait)} | {Format.Duration(r.LowestMeanWait)} | " +
                $"{Format.Duration(r.LeaseWorstWait)} ({r.LeaseRuns} refreshes) | {r.BulkShare * 100:F1}% | {Format.Duration(r.LongestSlice)} |"));
        }

        output.WriteLine();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Aging's bound: {Format.Duration(AgingBound)} per level, so the lowest level's worst wait should be about {Format.Duration(AgingBound + Slice(settings))} " +
            $"(the bound plus one bulk slice, as the slice ran: a loaded machine stretches slices, see the last column)."));
    }

    private static long Ticks(TimeSpan duration) => (long)(duration.TotalSeconds * Stopwatch.Frequency);

    private static TimeSpan SeedTime(long stopwatchTicks, Settings settings) =>
        TimeSpan.FromSeconds(stopwatchTicks / (double)Stopwatch.Frequency / settings.TimeScale);
}
