using System;
using System.Diagnostics;
using System.Threading;
using PriorityAsync.Benchmarks.Infrastructure;
using PriorityAsync.Internal;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// What the stall watchdog costs with its default (<see cref="PrioritySchedulerOptions.DefaultStallTimeout"/>, on since issue 18): the
/// CPU time of its thread (Linux: /proc/self/task/*/schedstat of the thread named "PriorityAsync stall watchdog") while one loop is
/// idle, and while one loop is busy, over a window; per hour and as a share of one core. Run with <c>--watchdog-cost [seconds]</c>.
/// </summary>
public static class WatchdogCost
{
    public static void Run(int seconds)
    {
        var window = TimeSpan.FromSeconds(seconds);
        Console.WriteLine($"== Stall watchdog, default StallTimeout {PrioritySchedulerOptions.DefaultStallTimeout.TotalSeconds} s: its thread's CPU over {seconds} s ==");
        Console.WriteLine("| loop | checks | watchdog CPU per check | watchdog CPU per hour | share of one core |");
        Console.WriteLine("|---|---:|---:|---:|---:|");
        Measure("idle (parked)", window, busy: false);
        Measure("busy (items back to back)", window, busy: true);
    }

    private static void Measure(string name, TimeSpan window, bool busy)
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { Name = "watchdog-cost" });
        using var stop = new CancellationTokenSource();
        if (busy)
        {
            // One item at a time, back to back: each spins ~100 us, then queues the next.
            SendOrPostCallback? step = null;
            step = _ =>
            {
                long until = Stopwatch.GetTimestamp() + (Stopwatch.Frequency / 10_000);
                while (Stopwatch.GetTimestamp() < until)
                {
                    Thread.SpinWait(10);
                }

                if (!stop.IsCancellationRequested)
                {
                    SynchronizationContext.Current!.Post(step!, null);
                }
            };
            loop.Context.GetSynchronizationContext(0).Post(step, null);
        }
        else
        {
            loop.Context.GetTaskFactory(0).StartNew(static () => { }).Wait();
        }

        // Past the first two checks, whose CPU is mostly the JIT compiling the check: the steady state is what an hour costs. An idle
        // loop is not checked at all ([O-STALL]: the thread sleeps while every watched thread is idle): two intervals' wait instead.
        if (busy)
        {
            long warm = WatchdogThread.Shared.Checks + 2;
            while (WatchdogThread.Shared.Checks < warm)
            {
                Thread.Sleep(100);
            }
        }
        else
        {
            Thread.Sleep(2 * Internal.Watchdog.CheckInterval(PrioritySchedulerOptions.DefaultStallTimeout));
        }

        long cpu0 = ThreadCpu.Nanoseconds("PriorityAsync stall watchdog");
        long checks0 = WatchdogThread.Shared.Checks;
        var wall = Stopwatch.StartNew();
        Thread.Sleep(window);
        long cpu1 = ThreadCpu.Nanoseconds("PriorityAsync stall watchdog");
        long checks1 = WatchdogThread.Shared.Checks;
        double elapsed = wall.Elapsed.TotalSeconds;
        stop.Cancel();

        long checks = checks1 - checks0;
        double cpuSeconds = (cpu1 - cpu0) / 1e9;
        double perCheckUs = checks > 0 ? cpuSeconds * 1e6 / checks : 0;
        double perHourMs = cpuSeconds / elapsed * 3600 * 1000;
        double share = cpuSeconds / elapsed * 100;
        Console.WriteLine($"| {name} | {checks} | {perCheckUs:F1} us | {perHourMs:F1} ms | {share:F5} % |");
    }
}
