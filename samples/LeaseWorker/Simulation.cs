using System;
using System.Diagnostics;
using System.Threading;

namespace LeaseWorker;

/// <summary>Runs one mode against a fresh bus and measures it.</summary>
public static class Simulation
{
    /// <summary>Runs <paramref name="modeName"/> with <paramref name="settings"/> on a thread of its own and returns the measurements.</summary>
    public static ModeResult Run(string modeName, Settings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        Mode mode = Mode.Create(modeName);
        LeaseBus bus = LeaseBus.For(settings);
        var worker = new Worker(bus, mode, settings);

        // Leave the previous run's garbage out of this run's CPU time.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();

        TimeSpan makespan = default;
        TimeSpan cpuTime = default;
        Exception? failure = null;
        var monitor = new StallMonitor();

        // A thread of its own: the single-threaded modes turn the calling thread into their loop, and the caller (a test runner)
        // may have a SynchronizationContext of its own.
        var driver = new Thread(() =>
        {
            try
            {
                TimeSpan cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
                long start = Stopwatch.GetTimestamp();
                mode.Run(worker.RunAsync);
                makespan = Stopwatch.GetElapsedTime(start);
                cpuTime = Process.GetCurrentProcess().TotalProcessorTime - cpuBefore;
            }
            catch (Exception ex)
            {
                failure = ex;
            }
        })
        { Name = $"LeaseWorker {modeName}", IsBackground = true };
        driver.Start();
        driver.Join();
        monitor.Dispose();
        if (failure is not null)
        {
            throw new InvalidOperationException($"The {modeName} run failed: {failure.Message}", failure);
        }

        int? cpuThreads = mode.CpuThreads(settings.CpuKind);
        return new ModeResult(
            mode.Name,
            mode.RunsOn,
            bus.Totals(),
            makespan,
            LowerBound.For(settings, cpuThreads),
            cpuThreads,
            cpuTime - monitor.OwnCpuTime,
            worker.PeakBusyThreads,
            monitor.WorstStall,
            (mode as SeedPrioritizeMode)?.Laps);
    }

    /// <summary>Runs each mode once on a tiny workload, so that JIT compilation is not charged to the measured runs.</summary>
    public static void WarmUp(Settings settings, System.Collections.Generic.IEnumerable<string> modes)
    {
        ArgumentNullException.ThrowIfNull(modes);
        Settings tiny = settings with { Messages = 2, Steps = 2 };
        foreach (string mode in modes)
        {
            Run(mode, tiny);
        }
    }
}
