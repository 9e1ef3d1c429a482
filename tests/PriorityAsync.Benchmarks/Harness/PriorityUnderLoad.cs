using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using PriorityAsync.Baselines;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Priority under load: one producer keeps a loop saturated (a backlog of <see cref="Backlog"/> items) with items that each busy-run
/// for <see cref="ItemDurationUs"/> us; every tenth post is a high-level item. Measured: the wait of each high item (post to start
/// of its callback; p50/p99/max) and the loop's throughput. Compared: PriorityAsync with two levels (low 0, high 1) against the same
/// workload on a one-level PriorityContext (a FIFO) and on the AsyncContextThread replica (a FIFO).
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
    private const string Group = "Priority";

    public static IEnumerable<HarnessResult> Run(bool quick)
    {
        int items = quick ? 40_000 : 200_000;
        int rounds = quick ? 2 : 3;
        var byVariant = new Dictionary<string, List<(HarnessResult Result, long[] Waits, int Count)>>();
        for (int round = 0; round < rounds; round++)
        {
            foreach (Variant variant in Variants())
            {
                (HarnessResult result, long[] waits, int count) = RunOne(variant, items);
                if (!byVariant.TryGetValue(result.Name, out List<(HarnessResult, long[], int)>? list))
                {
                    byVariant[result.Name] = list = new List<(HarnessResult, long[], int)>();
                }

                list.Add((result, waits, count));
            }
        }

        // Percentiles over all rounds' high items pooled; throughput: the median round.
        var results = new List<HarnessResult>();
        foreach ((string name, List<(HarnessResult Result, long[] Waits, int Count)> runs) in byVariant)
        {
            long[] pooled = runs.SelectMany(r => r.Waits.Take(r.Count)).ToArray();
            double medianThroughput = runs.Select(r => r.Result.ItemsPerSecond!.Value).OrderBy(v => v).ElementAt(runs.Count / 2);
            HarnessResult merged = HarnessResult.FromTicks(Group, name, pooled, pooled.Length, medianThroughput);
            results.Add(merged);
            Console.WriteLine($"{Group,-10} {name,-48} high wait p50 {merged.P50Us,8:F1} us  p99 {merged.P99Us,9:F1} us  max {merged.MaxUs,9:F1} us  throughput {medianThroughput / 1e3,8:F1} k items/s (D = {ItemDurationUs} us)");
        }

        return results;
    }

    private static IEnumerable<Variant> Variants()
    {
        yield return new Variant("PriorityAsync 2 levels (high = 1)", () => new PriorityLoop(levels: 2, highLevel: 1));
        yield return new Variant("PriorityAsync 1 level (FIFO)", () => new PriorityLoop(levels: 1, highLevel: 0));
        yield return new Variant("AsyncContextThread replica (FIFO)", () => new ReplicaLoop());
    }

    private static (HarnessResult Result, long[] Waits, int Count) RunOne(Variant variant, int items)
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
            SpinFor(durationTicks);
            state.Ran++;
            Volatile.Write(ref state.RanPublished, state.Ran);
        };
        SendOrPostCallback high = s =>
        {
            long now = Stopwatch.GetTimestamp();
            int id = (int)s!;
            state.Waits[state.HighCount++] = now - state.PostedAt[id];
            SpinFor(durationTicks);
            state.Ran++;
            Volatile.Write(ref state.RanPublished, state.Ran);
        };

        // Warm up the loop and the callbacks.
        for (int i = 0; i < 200; i++)
        {
            loop.Post(false, low, null);
        }

        WaitFor(state, 200);
        state.Reset();

        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < items; i++)
        {
            var spinner = default(SpinWait);
            while (i - Volatile.Read(ref state.RanPublished) >= Backlog)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
            }

            if (i % 10 == 9)
            {
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
        return (result, state.Waits, state.HighCount);
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

    private sealed record Variant(string Name, Func<ILoop> Create);

    private sealed class LoadState(int items)
    {
        public readonly long[] PostedAt = new long[items];
        public readonly long[] Waits = new long[items / 10 + 1];
        public long Ran;
        public long RanPublished;
        public int HighCount;

        public void Reset()
        {
            Ran = 0;
            HighCount = 0;
            Volatile.Write(ref RanPublished, 0);
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

    private sealed class ReplicaLoop : ILoop
    {
        private readonly AsyncContextThreadReplica _thread = new();

        public void Post(bool high, SendOrPostCallback callback, object? state) => _thread.Context.SynchronizationContext.Post(callback, state);

        public void Dispose() => _thread.Dispose();
    }
}
