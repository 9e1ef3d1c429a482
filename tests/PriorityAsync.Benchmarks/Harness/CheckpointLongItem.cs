using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Checkpoints where they are used: inside one long item that has run past its time quota, with nothing else waiting, so none yields
/// (issue 22). BenchmarkDotNet's rows (<see cref="CheckpointBenchmarks"/>) run short invocations that never reach that state. Each
/// variant is one item on its own loop thread (quota on: a 1 ms slice; quota off); the item first spins for <see cref="SpinSlices"/>
/// slices, then the two take <see cref="Rounds"/> rounds of <see cref="OpsPerRound"/> calls in turn (Stopwatch), and the harness
/// reports the median round and its range, and the bytes allocated on the loop thread per call.
/// </summary>
/// <remarks>Goals: a checkpoint in the long item costs at most 1.2x the same loop with the quota off and at most 1.5x <c>ShouldYield</c>
/// in the same item, and allocates nothing. A goal is met only if every round pairing meets it (the worst ratio), missed if none does,
/// and "unclear" otherwise.</remarks>
public static class CheckpointLongItem
{
    private const int SpinSlices = 4;
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(1);
    private static int s_flag;

    public static int Rounds { get; set; } = 7;

    public static int OpsPerRound { get; set; } = 2_000_000;

    public static IReadOnlyList<(string Goal, string Figure, bool? Met)> Run(System.IO.TextWriter output)
    {
        Volatile.Write(ref s_flag, 0); // never raised: the flag awaiter always completes at once
        output.WriteLine($"== Checkpoints in a long item over its quota, nothing waiting ({Rounds} rounds x {OpsPerRound:N0} calls, ns per call: median [lowest .. highest]) ==");
        (Figures quotaOn, Figures quotaOff) = MeasureBoth();
        output.WriteLine("| variant | await Checkpoint() | ShouldYield | await on a one-flag struct awaiter | B/call (checkpoint) |");
        output.WriteLine("|---|---|---|---|---:|");
        output.WriteLine($"| long item, quota used up (TimeSlice {Slice.TotalMilliseconds} ms, ran {SpinSlices} slices first) | {Cell(quotaOn.Checkpoint)} | {Cell(quotaOn.ShouldYield)} | {Cell(quotaOn.Flag)} | {quotaOn.CheckpointBytes:F3} |");
        output.WriteLine($"| same loop, TimeSlice = null | {Cell(quotaOff.Checkpoint)} | {Cell(quotaOff.ShouldYield)} | {Cell(quotaOff.Flag)} | {quotaOff.CheckpointBytes:F3} |");

        var goals = new List<(string, string, bool?)>
        {
            Goal("checkpoint in a long item over its quota: <= 1.2x the quota-off loop", quotaOn.Checkpoint, quotaOff.Checkpoint, 1.2),
            Goal("checkpoint in a long item over its quota: <= 1.5x ShouldYield (same item)", quotaOn.Checkpoint, quotaOn.ShouldYield, 1.5),
            ("checkpoint in a long item over its quota: 0 B", $"{quotaOn.CheckpointBytes:F3} B/call", quotaOn.CheckpointBytes < 0.01),
        };
        foreach ((string goal, string figure, bool? met) in goals)
        {
            output.WriteLine($"{goal}: {figure} -> {(met is null ? "unclear (the spread straddles the goal)" : met.Value ? "met" : "missed")}");
        }

        return goals;
    }

    private static (string, string, bool?) Goal(string goal, double[] ours, double[] reference, double bound)
    {
        // Round i of one against round i of the other: they ran in the same context, one after another, so they saw the same machine.
        double[] ratios = ours.Zip(reference, (a, b) => a / b).Order().ToArray();
        double median = Median(ours) / Median(reference);
        bool? met = ratios[^1] <= bound ? true : ratios[0] > bound ? false : null;
        return (goal, FormattableString.Invariant($"{median:F2}x (rounds {ratios[0]:F2} .. {ratios[^1]:F2})"), met);
    }

    /// <summary>Both variants at once: one long item on each of two loops (quota on, quota off), which take their rounds in turn, so
    /// round i of each saw the same machine. Between rounds each item blocks its loop thread (still the same running item: the quota
    /// stays used up), waiting for its next turn.</summary>
    private static (Figures On, Figures Off) MeasureBoth()
    {
        using var on = new LongItem(Slice);
        using var off = new LongItem(null);
        for (int round = -1; round < Rounds; round++) // round -1: warm-up
        {
            on.RunRound(round);
            off.RunRound(round);
        }

        return (on.Finish(), off.Finish());
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<double> Checkpoints(int n)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
        {
            await Priority.Checkpoint();
        }

        return Ns(Stopwatch.GetTimestamp() - start) / n;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double ShouldYields(int n)
    {
        int yields = 0;
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
        {
            if (Priority.ShouldYield)
            {
                yields++;
            }
        }

        double ns = Ns(Stopwatch.GetTimestamp() - start) / n;
        return yields == 0 ? ns : throw new InvalidOperationException("ShouldYield was true with nothing waiting.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<double> FlagAwaits(int n)
    {
        long start = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
        {
            await new FlagAwaitable();
        }

        return Ns(Stopwatch.GetTimestamp() - start) / n;
    }

    private static double Ns(long ticks) => ticks * 1e9 / Stopwatch.Frequency;

    private static double Median(double[] values)
    {
        double[] sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    private static string Cell(double[] values) => FormattableString.Invariant($"{Median(values):F2} [{values.Min():F2} .. {values.Max():F2}]");

    private sealed record Figures(double[] Checkpoint, double[] ShouldYield, double[] Flag, double CheckpointBytes);

    /// <summary>One long item on its own <see cref="PriorityContextThread"/>: spins past its quota, then measures one round per turn.</summary>
    private sealed class LongItem : IDisposable
    {
        private readonly PriorityContextThread _loop;
        private readonly SemaphoreSlim _go = new(0);
        private readonly SemaphoreSlim _done = new(0);
        private readonly Figures _figures = new(new double[Rounds], new double[Rounds], new double[Rounds], 0);
        private readonly Task _item;
        private long _bytes;
        private int _round;

        public LongItem(TimeSpan? slice)
        {
            _loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, TimeSlice = slice, Name = "checkpoint-long-item" });
            _item = _loop.Context.GetTaskFactory(0).StartNew(Body).Unwrap();
        }

        public void RunRound(int round)
        {
            _round = round;
            _go.Release();
            if (!_done.Wait(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException("checkpoint-long-item: a round did not finish in 60 s.");
            }
        }

        public Figures Finish()
        {
            _round = int.MinValue; // the item's last turn: leave
            _go.Release();
            _item.GetAwaiter().GetResult();
            return _figures with { CheckpointBytes = (double)_bytes / ((long)Rounds * OpsPerRound) };
        }

        public void Dispose() => _loop.Dispose();

        private async Task Body()
        {
            // Use the quota up: spin past it (the slice clock ticks every millisecond with a 1 ms slice) before any measurement.
            var spin = Stopwatch.StartNew();
            while (spin.Elapsed < SpinSlices * Slice)
            {
                await Priority.Checkpoint();
            }

            while (true)
            {
                _go.Wait(); // blocks the loop thread: this item keeps running, so its quota stays used up
                int round = _round;
                if (round == int.MinValue)
                {
                    return;
                }

                long before = GC.GetAllocatedBytesForCurrentThread();
                double checkpoint = await Checkpoints(OpsPerRound);
                long bytes = GC.GetAllocatedBytesForCurrentThread() - before;
                double shouldYield = ShouldYields(OpsPerRound);
                double flag = await FlagAwaits(OpsPerRound);
                if (round >= 0)
                {
                    _bytes += bytes;
                    _figures.Checkpoint[round] = checkpoint;
                    _figures.ShouldYield[round] = shouldYield;
                    _figures.Flag[round] = flag;
                }

                _done.Release();
            }
        }
    }

    /// <summary>Completes at once while <see cref="s_flag"/> is 0 (always): the floor of an awaited checkpoint that reads one flag.</summary>
    private readonly struct FlagAwaitable : ICriticalNotifyCompletion
    {
        public FlagAwaitable GetAwaiter() => this;

        public bool IsCompleted => Volatile.Read(ref s_flag) == 0;

        public void GetResult()
        {
        }

        public void OnCompleted(Action continuation) => continuation();

        public void UnsafeOnCompleted(Action continuation) => continuation();
    }
}
