using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using PriorityAsync.Benchmarks.Harness;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// A flood of low-level items on several threads, with high-level items among them: the wait of each high item (post to start of
/// its callback), raw and over the waits that no worker thread lost its core during (<see cref="GapRecorder"/>, the measure
/// <see cref="PriorityUnderLoad"/> reports for the single-threaded context).
/// </summary>
/// <remarks>
/// <para>Each item busy-runs <see cref="ItemDurationUs"/>. One producer keeps at least <see cref="Backlog"/> low items queued: it
/// tops the queue up, then (when no high item is in flight) waits a random 0..D and posts one high item, then sleeps 1 ms, so that it
/// does not take a core from the workers on this 2-core machine (the single-threaded harness's producer spins; here the workers alone
/// fill the cores). High items never queue behind each other (one in flight at most).</para>
/// <para>With every thread busy, a scheduler that picks the highest level at each dequeue starts a high item when the first running
/// low item ends: at most D plus one dispatch; a FIFO starts it after the whole backlog.</para>
/// </remarks>
internal static class Flood
{
    public const double ItemDurationUs = 5.0;
    public const int Backlog = 2048;
    public const double GapThresholdUs = 20.0;

    /// <param name="Undisturbed">The waits during which no worker thread lost its core.</param>
    /// <param name="OneThreadKept">The waits during which at least one worker thread kept its core (the bound's condition).</param>
    public sealed record Result(long[] Waits, long[] Undisturbed, long[] OneThreadKept, double ItemsPerSecond, int Gaps, double GapShare);

    public static Result Run(IWorkers workers, int items, int seed)
    {
        var state = new State(items);
        long durationTicks = (long)(ItemDurationUs * Stopwatch.Frequency / 1_000_000.0);
        var random = new Random(seed);
        SendOrPostCallback low = static s => ((State)s!).Low();
        SendOrPostCallback high = static s => ((Probe)s!).State.High((Probe)s!);
        var probes = new Probe[items];
        for (int i = 0; i < items; i++)
        {
            probes[i] = new Probe(state, i);
        }

        state.DurationTicks = durationTicks;
        for (int i = 0; i < 400; i++)
        {
            workers.Post(false, low, state);
        }

        state.WaitFor(400);
        state.Reset();

        long start = Stopwatch.GetTimestamp();
        int posted = 0;
        int highsPosted = 0;
        while (posted < items)
        {
            while (posted < items && posted - Volatile.Read(ref state.Ran) < Backlog)
            {
                workers.Post(false, low, state);
                posted++;
            }

            if (posted < items && posted >= Backlog && Volatile.Read(ref state.HighCount) == highsPosted)
            {
                highsPosted++;
                SpinFor((long)(random.NextDouble() * durationTicks)); // arrive at a random point of the running items
                state.PostedAt[posted] = Stopwatch.GetTimestamp();
                workers.Post(true, high, probes[posted]);
                posted++;
            }

            Thread.Sleep(1);
        }

        state.WaitFor(items);
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        GapRecorder[] recorders = state.Recorders.Values.ToArray();
        (_, _, long[] undisturbed) = GapRecorder.Classify(state.WaitStarts, state.Waits, state.HighCount, durationTicks, recorders);
        (_, _, long[] oneKept) = GapRecorder.Classify(state.WaitStarts, state.Waits, state.HighCount, durationTicks, recorders, anyThreadKeptItsCore: true);
        long gapTicks = recorders.Sum(r => r.TotalTicks);
        double threadSeconds = seconds * Math.Max(1, recorders.Length);
        return new Result(
            state.Waits[..state.HighCount],
            undisturbed,
            oneKept,
            items / seconds,
            recorders.Sum(r => r.Gaps.Count),
            gapTicks / (double)Stopwatch.Frequency / threadSeconds);
    }

    private static void SpinFor(long ticks)
    {
        long end = Stopwatch.GetTimestamp() + ticks;
        while (Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(1);
        }
    }

    private sealed record Probe(State State, int Id);

    /// <summary>The workers' side: one <see cref="GapRecorder"/> per thread that runs items.</summary>
    private sealed class State(int items)
    {
        public readonly long[] PostedAt = new long[items];
        public readonly long[] Waits = new long[items];
        public readonly long[] WaitStarts = new long[items];
        public readonly ThreadLocal<GapRecorder> Recorders = new(() => new GapRecorder(GapThresholdUs), trackAllValues: true);
        public long Ran;
        public int HighCount;
        public long DurationTicks;
        private readonly ManualResetEventSlim _done = new(false);
        private long _target = long.MaxValue;

        public void Low()
        {
            GapRecorder gaps = Recorders.Value!;
            gaps.ItemStarted(Stopwatch.GetTimestamp());
            gaps.SpinFor(DurationTicks);
            gaps.ItemEnded();
            Ended();
        }

        public void High(Probe probe)
        {
            long now = Stopwatch.GetTimestamp();
            GapRecorder gaps = Recorders.Value!;
            gaps.ItemStarted(now);

            // One high item in flight at most: HighCount is written by one item at a time, and published to the producer.
            int index = HighCount;
            WaitStarts[index] = PostedAt[probe.Id];
            Waits[index] = now - PostedAt[probe.Id];
            Volatile.Write(ref HighCount, index + 1);
            gaps.SpinFor(DurationTicks);
            gaps.ItemEnded();
            Ended();
        }

        public void Reset()
        {
            foreach (GapRecorder recorder in Recorders.Values)
            {
                recorder.Reset();
            }

            HighCount = 0;
            Volatile.Write(ref _target, long.MaxValue); // no stale target from the warm-up: the run's WaitFor sets its own
            _done.Reset();
            Volatile.Write(ref Ran, 0);
        }

        public void WaitFor(long count)
        {
            Interlocked.Exchange(ref _target, count); // a full fence: the read of Ran below cannot move before it
            if (Volatile.Read(ref Ran) < count && !_done.Wait(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException($"{Volatile.Read(ref Ran)} of {count} items ran within 60 s.");
            }
        }

        private void Ended()
        {
            if (Interlocked.Increment(ref Ran) == Volatile.Read(ref _target))
            {
                _done.Set();
            }
        }
    }

    /// <summary>Percentiles in microseconds.</summary>
    public static (double P50, double P99, double Max) Percentiles(IReadOnlyList<long> ticks)
    {
        if (ticks.Count == 0)
        {
            return (double.NaN, double.NaN, double.NaN);
        }

        long[] sorted = ticks.Order().ToArray();
        return (HarnessResult.Us(At(sorted, 0.5)), HarnessResult.Us(At(sorted, 0.99)), HarnessResult.Us(sorted[^1]));
    }

    private static long At(long[] sorted, double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];
}
