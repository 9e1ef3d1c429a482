using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using Nito.AsyncEx;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Priority under load: one producer keeps a loop saturated (a backlog of <see cref="Backlog"/> items) with items that each busy-run
/// for <see cref="ItemDurationUs"/> us; every tenth post is a high-level item (one in flight at most, so high items never queue
/// behind each other). Measured: the wait of each high item (post to start
/// of its callback; p50/p99/max) and the loop's throughput. Compared: PriorityAsync with two levels (low 0, high 1) against the same
/// workload on a one-level PriorityContext (a FIFO) and on the AsyncContextThread (a FIFO).
/// </summary>
/// <remarks>
/// High items are posted at a random point within a low item (the producer waits a random 0..D before each high post), so their
/// arrival is not phase-locked to the loop. A loop cannot preempt a running item, so the bound for a high item is the rest of
/// the running low item (at most D) plus one dispatch.
/// </remarks>
public static class PriorityUnderLoad
{
    public const double ItemDurationUs = 5.0;
    public const int Backlog = 1024;
    public const double GapThresholdUs = 20.0;
    public const string UndisturbedGroup = "Priority, OS-undisturbed waits";
    private const string Group = "Priority";

    public static IEnumerable<HarnessResult> Run(bool quick)
    {
        // Several short rounds, the variants interleaved, so a change in the machine's load hits all variants alike.
        int items = quick ? 30_000 : 60_000;
        int rounds = quick ? 2 : 6;
        var byVariant = new Dictionary<string, List<(HarnessResult Result, long[] Waits, int Count, Explanation Why)>>();
        for (int round = 0; round < rounds; round++)
        {
            foreach (Variant variant in Variants())
            {
                (HarnessResult result, long[] waits, int count, Explanation why) = RunOne(variant, items);
                if (!byVariant.TryGetValue(result.Name, out List<(HarnessResult, long[], int, Explanation)>? list))
                {
                    byVariant[result.Name] = list = new List<(HarnessResult, long[], int, Explanation)>();
                }

                list.Add((result, waits, count, why));
            }
        }

        // Percentiles over all rounds' high items pooled; throughput: the median round.
        var results = new List<HarnessResult>();
        foreach ((string name, List<(HarnessResult Result, long[] Waits, int Count, Explanation Why)> runs) in byVariant)
        {
            long[] pooled = runs.SelectMany(r => r.Waits.Take(r.Count)).ToArray();
            double medianThroughput = runs.Select(r => r.Result.ItemsPerSecond!.Value).OrderBy(v => v).ElementAt(runs.Count / 2);
            int over = runs.Sum(r => r.Why.WaitsOverD);
            int overWithGap = runs.Sum(r => r.Why.WaitsOverDDuringGap);
            int gaps = runs.Sum(r => r.Why.Gaps);
            double gapMs = runs.Sum(r => r.Why.GapTicks) * 1000.0 / Stopwatch.Frequency;
            long[] undisturbed = runs.SelectMany(r => r.Why.UndisturbedWaits).ToArray();
            HarnessResult clean = HarnessResult.FromTicks(Group, name, undisturbed, undisturbed.Length, null);
            double runSeconds = runs.Sum(r => items / r.Result.ItemsPerSecond!.Value);
            string note = FormattableString.Invariant(
                $"{over} of {pooled.Length} high waits > D; {overWithGap} of those overlapped a descheduling of the loop thread (a gap > {GapThresholdUs} us: {gaps} gaps, {gapMs:F0} ms = {gapMs / 10 / runSeconds:F0}% of the {runSeconds:F1} s run). ") +
                FormattableString.Invariant($"The {undisturbed.Length} waits that overlapped no descheduling: p50 {clean.P50Us:F1} us, p99 {clean.P99Us:F1} us, max {clean.MaxUs:F1} us.");
            // Throughput over the time the loop thread actually had a core (wall time less the measured descheduling gaps): the
            // other tenants of a shared machine take the loop's core for a different share of each round, which swamps a 5% effect.
            double medianOnCpu = runs
                .Select(r => items / ((items / r.Result.ItemsPerSecond!.Value) - (r.Why.GapTicks / (double)Stopwatch.Frequency)))
                .OrderBy(v => v)
                .ElementAt(runs.Count / 2);
            HarnessResult merged = HarnessResult.FromTicks(Group, name, pooled, pooled.Length, medianThroughput, note) with { OnCpuItemsPerSecond = medianOnCpu };
            results.Add(merged);
            if (name.StartsWith("PriorityAsync 2", StringComparison.Ordinal))
            {
                // The part of the figure the library controls: waits during which the loop thread kept its core.
                results.Add(clean with { Group = UndisturbedGroup, Name = "PriorityAsync 2 levels: OS-undisturbed waits" });
            }

            Console.WriteLine($"{Group,-10} {name,-48} high wait p50 {merged.P50Us,8:F1} us  p99 {merged.P99Us,9:F1} us  max {merged.MaxUs,9:F1} us  throughput {medianThroughput / 1e3,8:F1} k items/s ({medianOnCpu / 1e3:F1} k on CPU; D = {ItemDurationUs} us)");
            Console.WriteLine($"{"",-10} {"",-48} {note}");
        }

        return results;
    }

    private static IEnumerable<Variant> Variants()
    {
        yield return new Variant("PriorityAsync 2 levels (high = 1)", () => new PriorityLoop(levels: 2, highLevel: 1));
        yield return new Variant("PriorityAsync 1 level (FIFO)", () => new PriorityLoop(levels: 1, highLevel: 0));
        yield return new Variant("AsyncContextThread (FIFO)", () => new AsyncContextLoop());
    }

    private static (HarnessResult Result, long[] Waits, int Count, Explanation Why) RunOne(Variant variant, int items)
    {
        var state = new LoadState(items);
        using ILoop loop = variant.Create();
        long durationTicks = (long)(ItemDurationUs * Stopwatch.Frequency / 1_000_000.0);
        var random = new Random(42);
        object[] boxedIds = new object[items];
        for (int i = 0; i < items; i++)
        {
            boxedIds[i] = i;
        }

        SendOrPostCallback low = s =>
        {
            state.ItemStarted(Stopwatch.GetTimestamp());
            state.SpinFor(durationTicks);
            state.ItemEnded();
        };
        SendOrPostCallback high = s =>
        {
            long now = Stopwatch.GetTimestamp();
            state.ItemStarted(now);
            int id = (int)s!;
            state.WaitStarts[state.HighCount] = state.PostedAt[id];
            state.Waits[state.HighCount++] = now - state.PostedAt[id];
            state.SpinFor(durationTicks);
            state.ItemEnded();
        };

        // Warm up the loop and the callbacks.
        for (int i = 0; i < 200; i++)
        {
            loop.Post(false, low, null);
        }

        WaitFor(state, 200);
        state.Reset();

        long start = Stopwatch.GetTimestamp();
        int highsPosted = 0;
        for (int i = 0; i < items; i++)
        {
            var spinner = default(SpinWait);
            while (i - Volatile.Read(ref state.RanPublished) >= Backlog)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
            }

            // Every tenth post is high, with one high item in flight at most: the first Backlog posts (filling the queue) and a post
            // while the previous high item still waits are low. Otherwise a burst of posts (after the producer lost its core) would
            // queue high items behind each other, which measures the burst, not what low-level work does to high-level work.
            if (i >= Backlog && i % 10 == 9 && Volatile.Read(ref state.HighCount) == highsPosted)
            {
                highsPosted++;
                SpinFor((long)(random.NextDouble() * durationTicks)); // arrive at a random point of the running item
                state.PostedAt[i] = Stopwatch.GetTimestamp();
                loop.Post(true, high, boxedIds[i]);
            }
            else
            {
                loop.Post(false, low, null);
            }
        }

        WaitFor(state, items);
        double seconds = (Stopwatch.GetTimestamp() - start) / (double)Stopwatch.Frequency;
        var result = new HarnessResult(Group, variant.Name, state.HighCount, 0, 0, 0, 0, items / seconds);
        return (result, state.Waits, state.HighCount, state.Explain(durationTicks));
    }

    private static void WaitFor(LoadState state, long count)
    {
        var spinner = default(SpinWait);
        while (Volatile.Read(ref state.RanPublished) < count)
        {
            spinner.SpinOnce(sleep1Threshold: -1);
        }
    }

    private static void SpinFor(long ticks)
    {
        long end = Stopwatch.GetTimestamp() + ticks;
        while (Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(1);
        }
    }

    private readonly record struct Explanation(int WaitsOverD, int WaitsOverDDuringGap, int Gaps, long GapTicks, long[] UndisturbedWaits);

    private sealed record Variant(string Name, Func<ILoop> Create);

    /// <summary>Loop-side state. Besides the waits it records every time the loop thread lost its core (<see cref="GapRecorder"/>),
    /// so a long wait can be told apart from a scheduling decision of the loop.</summary>
    private sealed class LoadState(int items)
    {
        public readonly long[] PostedAt = new long[items];
        public readonly long[] Waits = new long[(items / 10) + 1];
        public readonly long[] WaitStarts = new long[(items / 10) + 1];
        public long Ran;
        public long RanPublished;
        public int HighCount;
        private readonly GapRecorder _gaps = new(GapThresholdUs);

        public void Reset()
        {
            Ran = 0;
            HighCount = 0;
            _gaps.Reset();
            Volatile.Write(ref RanPublished, 0);
        }

        public void ItemStarted(long now) => _gaps.ItemStarted(now);

        public void ItemEnded()
        {
            Ran++;
            Volatile.Write(ref RanPublished, Ran);
            _gaps.ItemEnded();
        }

        public void SpinFor(long ticks) => _gaps.SpinFor(ticks);

        public Explanation Explain(long durationTicks)
        {
            (int over, int overWithGap, long[] undisturbed) = GapRecorder.Classify(WaitStarts, Waits, HighCount, durationTicks, [_gaps]);
            return new Explanation(over, overWithGap, _gaps.Gaps.Count, _gaps.TotalTicks, undisturbed);
        }
    }

    private interface ILoop : IDisposable
    {
        void Post(bool high, SendOrPostCallback callback, object? state);
    }

    private sealed class PriorityLoop : ILoop
    {
        private readonly PriorityContextThread _thread;
        private readonly SynchronizationContext _low;
        private readonly SynchronizationContext _high;

        public PriorityLoop(int levels, int highLevel)
        {
            _thread = new PriorityContextThread(new PriorityContextOptions { Levels = levels, Name = "load" });
            _low = _thread.Context.GetSynchronizationContext(0);
            _high = _thread.Context.GetSynchronizationContext(highLevel);
        }

        public void Post(bool high, SendOrPostCallback callback, object? state) => (high ? _high : _low).Post(callback, state);

        public void Dispose() => _thread.Dispose();
    }

    private sealed class AsyncContextLoop : ILoop
    {
        private readonly AsyncContextThread _thread = new();

        public void Post(bool high, SendOrPostCallback callback, object? state) => _thread.Context.SynchronizationContext.Post(callback, state);

        public void Dispose() => _thread.Dispose();
    }
}
