using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Nito.AsyncEx;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// The uncontended lock's acquire + release as CPU time of the thread that runs it (<c>CLOCK_THREAD_CPUTIME_ID</c>), beside
/// <see cref="LockBenchmarks"/>' wall-clock rows: time the thread spent descheduled is not counted, so on a shared machine whose load
/// is above its cores the ratios stay readable (caches shared with the other processes still cost something). The same cases as
/// <see cref="LockBenchmarks"/>: off every scheduler (the harness's thread), and on a <see cref="PriorityContextThread"/> in plain level
/// code, in a flow nobody awaits and in a flow its caller awaits; every <c>await</c> completes at once, so each case runs on one thread.
/// </summary>
/// <remarks>Rounds of <see cref="Pairs"/> pairs, the locks in turn within a round; the median round per case, its minimum, and the bytes
/// allocated per pair on that thread. Not a replacement for the BenchmarkDotNet rows on a quiet machine: a cross-check under load.</remarks>
public static class LockCpu
{
    private const int Pairs = 200_000;
    private const int Levels = 3;

    public static void Run(int rounds, TextWriter output)
    {
        var priorityLock = new PriorityLock { Name = "bench" };
        var prioritySemaphore = new PrioritySemaphore(1, 1);
        var semaphore = new SemaphoreSlim(1, 1);
        var asyncLock = new AsyncLock();
        (string Name, Func<int, Task> Pairs)[] locks =
        [
            ("PriorityLock", async count =>
            {
                for (int i = 0; i < count; i++)
                {
                    using (await priorityLock.LockAsync())
                    {
                    }
                }
            }),
            ("PrioritySemaphore", async count =>
            {
                for (int i = 0; i < count; i++)
                {
                    await prioritySemaphore.WaitAsync();
                    prioritySemaphore.Release();
                }
            }),
            ("SemaphoreSlim", async count =>
            {
                for (int i = 0; i < count; i++)
                {
                    await semaphore.WaitAsync();
                    semaphore.Release();
                }
            }),
            ("AsyncEx AsyncLock", async count =>
            {
                for (int i = 0; i < count; i++)
                {
                    using (await asyncLock.LockAsync())
                    {
                    }
                }
            }),
        ];
        string[] places = ["off every scheduler", "on a loop, plain level code", "on a loop, in a flow nobody awaits", "on a loop, in a flow its caller awaits"];

        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels, Name = "bench-lock-cpu" });
        var cpu = new Dictionary<(string, string), List<double>>();
        var bytes = new Dictionary<(string, string), double>();
        string loadBefore = LoadAverage();
        DateTime start = DateTime.UtcNow;
        // Warm-up: every case's method called often enough to be compiled at tier 1 (a method with a loop that is called a few times
        // runs on-stack-replaced tier-0 code, whose locals stay in memory: an await of a ValueTask<T> then costs 10 ns more), and
        // the regions' flows made.
        for (int call = 0; call < 60; call++)
        {
            foreach ((_, Func<int, Task> pairs) in locks)
            {
                foreach (string place in places)
                {
                    MeasureAt(place, () => pairs(100), 100, loop.Context);
                }
            }
        }

        Thread.Sleep(500); // the background compiler
        for (int round = -1; round < rounds; round++)
        {
            foreach ((string name, Func<int, Task> pairs) in locks)
            {
                foreach (string place in places)
                {
                    (double ns, double b) = MeasureAt(place, () => pairs(Pairs), Pairs, loop.Context);
                    if (round >= 0)
                    {
                        (cpu.TryGetValue((name, place), out List<double>? list) ? list : cpu[(name, place)] = []).Add(ns);
                        bytes[(name, place)] = b;
                    }
                }
            }
        }

        output.WriteLine();
        output.WriteLine($"## The uncontended lock in thread CPU time ({rounds} rounds of {Pairs:N0} pairs, {start:yyyy-MM-dd HH:mm:ss}-{DateTime.UtcNow:HH:mm:ss} UTC, load {loadBefore} before, {LoadAverage()} after)");
        output.WriteLine();
        output.WriteLine("| lock | where | median ns CPU per pair | min | B per pair | vs SemaphoreSlim (same place) | vs AsyncLock (same place) |");
        output.WriteLine("|---|---|---:|---:|---:|---:|---:|");
        foreach ((string name, _) in locks)
        {
            foreach (string place in places)
            {
                double median = Median(cpu[(name, place)]);
                double semaphoreSlim = Median(cpu[("SemaphoreSlim", place)]);
                double asyncEx = Median(cpu[("AsyncEx AsyncLock", place)]);
                output.WriteLine(
                    $"| {name} | {place} | {median:F1} | {cpu[(name, place)].Min():F1} | {bytes[(name, place)]:F0} | {median / semaphoreSlim:F2}x | {median / asyncEx:F2}x |");
            }
        }
    }

    private static (double Nanoseconds, double Bytes) MeasureAt(string place, Func<Task> pairs, int count, PriorityContext context)
    {
        switch (place)
        {
            case "off every scheduler":
                return Measure(pairs, count);
            case "on a loop, plain level code":
                var done = new TaskCompletionSource<(double, double)>(TaskCreationOptions.RunContinuationsAsynchronously);
                context.GetSynchronizationContext(1).Post(_ => done.SetResult(Measure(pairs, count)), null);
                return done.Task.GetAwaiter().GetResult();
            case "on a loop, in a flow nobody awaits":
                return context.InvokeAsync(() => Task.FromResult(Measure(pairs, count)), 1).Task.GetAwaiter().GetResult();
            default:
                return context.InvokeAsync(async () => await context.InvokeAsync(() => Task.FromResult(Measure(pairs, count)), 1), 1).Task.GetAwaiter().GetResult();
        }
    }

    private static (double Nanoseconds, double Bytes) Measure(Func<Task> pairs, int count)
    {
        long allocated = GC.GetAllocatedBytesForCurrentThread();
        long before = ThreadCpu.CurrentThreadNanoseconds();
        Task run = pairs();
        long after = ThreadCpu.CurrentThreadNanoseconds();
        allocated = GC.GetAllocatedBytesForCurrentThread() - allocated;
        if (!run.IsCompletedSuccessfully)
        {
            throw new InvalidOperationException("An uncontended pair did not complete at once: the measurement would span threads.");
        }

        return ((after - before) / (double)count, allocated / (double)count);
    }

    internal static string LoadAverage() => File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3)) : "?";

    private static double Median(List<double> values)
    {
        double[] sorted = [.. values.Order()];
        return sorted[sorted.Length / 2];
    }
}
