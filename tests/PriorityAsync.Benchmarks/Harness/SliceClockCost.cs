using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// What the time quota (<see cref="PriorityContextOptions.TimeSlice"/>) costs and how late it is, per slice length: the basis of its
/// default (docs/benchmarks.md, "Checkpoints"). Run with <c>--slice-clock</c>.
/// </summary>
/// <remarks>
/// <para>Cost: the loop does nothing per item for the quota; what costs is the slice clock's thread, which ticks every quarter slice
/// while a loop is awake. One item keeps the loop awake (it sleeps) for <see cref="Window"/>; the clock thread's own CPU time (Linux:
/// /proc/self/task/*/schedstat, in nanoseconds, of the thread named "PriorityAsync time slices") and its tick count over that window
/// give CPU per tick and the share of one core.</para>
/// <para>Lateness: an item spins on <c>ShouldYield</c> with another item waiting; the time until it turns true, in slices (the design
/// says between 1 and about 1.5, plus the OS timer's slack).</para>
/// </remarks>
public static class SliceClockCost
{
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(2);

    public static void Run()
    {
        Console.WriteLine("== Slice clock: CPU while a loop is awake, and when a used-up quota is seen (Stopwatch, this process) ==");
        Console.WriteLine("| TimeSlice | ticks/s | clock thread CPU us/tick | clock thread CPU, % of one core | quota seen after, in slices: p50 / max (20 samples) |");
        Console.WriteLine("|---|---:|---:|---:|---|");
        foreach (double ms in new[] { 1.0, 2, 5, 10, 20, 50 })
        {
            TimeSpan slice = TimeSpan.FromMilliseconds(ms);
            (double share, double ticksPerSecond) = CpuShare(slice);
            double[] late = Lateness(slice, samples: 20);
            Array.Sort(late);
            double cpuPerTickUs = ticksPerSecond > 0 ? share / 100.0 * 1e6 / ticksPerSecond : double.NaN;
            Console.WriteLine($"| {ms} ms | {ticksPerSecond:F0} | {cpuPerTickUs:F1} | {share:F3} | {late[late.Length / 2]:F2} / {late[^1]:F2} |");
        }

        // Idle: once the loop has parked, the clock must stop ticking (it sleeps until a loop wakes).
        using (var idle = new PriorityContextThread(new PriorityContextOptions { TimeSlice = TimeSpan.FromMilliseconds(1), Name = "slice-idle" }))
        {
            idle.Context.GetTaskFactory(0).StartNew(static () => { }).Wait();
            Thread.Sleep(200);
            long before = SliceClock.Shared.Ticks;
            Thread.Sleep(1000);
            Console.WriteLine($"Idle: {SliceClock.Shared.Ticks - before} ticks in 1 s with the loop parked (1 ms slice; dormant: {SliceClock.Shared.IsDormant}).");
        }
    }

    private static (double Share, double TicksPerSecond) CpuShare(TimeSpan? slice)
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { TimeSlice = slice, Name = "slice-cost" });
        var started = new ManualResetEventSlim();
        double share = 0;
        double ticksPerSecond = 0;
        Task item = loop.Context.GetTaskFactory(0).StartNew(() =>
        {
            started.Set();
#pragma warning disable PA0002 // the measurement needs an item that holds the loop without using CPU itself
            Thread.Sleep(Window + TimeSpan.FromMilliseconds(200)); // awake, not parked, using no CPU itself
#pragma warning restore PA0002
        });
        started.Wait();
        Thread.Sleep(100); // past the registration
        long cpu0 = ClockThreadCpuNanoseconds();
        long ticks0 = SliceClock.Shared.Ticks;
        var wall = Stopwatch.StartNew();
        Thread.Sleep(Window);
        long cpu1 = ClockThreadCpuNanoseconds();
        long ticks1 = SliceClock.Shared.Ticks;
        double seconds = wall.Elapsed.TotalSeconds;
        share = (cpu1 - cpu0) / 1e9 / seconds * 100.0;
        ticksPerSecond = (ticks1 - ticks0) / seconds;
        item.Wait();
        return (share, ticksPerSecond);
    }

    /// <summary>The slice clock thread's CPU time so far (nanoseconds on the CPU); -1 where /proc is missing.</summary>
    private static long ClockThreadCpuNanoseconds() => Infrastructure.ThreadCpu.Nanoseconds("PriorityAsync time slices");

    private static double[] Lateness(TimeSpan slice, int samples)
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { TimeSlice = slice, Name = "slice-late" });
        var late = new double[samples];
        for (int i = 0; i < samples; i++)
        {
            int index = i;
            loop.Context.GetTaskFactory(0).StartNew(() =>
            {
                long start = Stopwatch.GetTimestamp();
                SynchronizationContext.Current!.Post(static _ => { }, null); // another item waits
                while (!Priority.ShouldYield)
                {
                    Thread.SpinWait(20);
                }

                late[index] = Stopwatch.GetElapsedTime(start).TotalMilliseconds / slice.TotalMilliseconds;
            }).Wait();
        }

        return late;
    }
}
