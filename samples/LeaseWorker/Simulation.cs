using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using LeaseWorker.Core;
using PriorityAsync;

namespace LeaseWorker;

/// <summary>Runs one mode against a fresh bus and measures it.</summary>
public static class Simulation
{
    /// <summary>Runs <paramref name="modeName"/> with <paramref name="settings"/> and returns the measurements. Blocks the caller.</summary>
    /// <param name="timeline">With --timeline: records what happens to each message; null otherwise.</param>
    public static ModeResult Run(string modeName, Settings settings, Timeline? timeline = null) =>
        RunAsync(modeName, settings, timeline).GetAwaiter().GetResult();

    /// <summary>
    /// Runs <paramref name="modeName"/> on a thread of its own: the single-threaded modes turn their calling thread into their loop,
    /// and the caller (a test runner) may have a SynchronizationContext of its own. Awaiting it, rather than blocking, keeps the
    /// caller's thread free when it is a thread-pool thread: timers and the bus's replies complete on the thread pool, and a pool
    /// short of threads delays every I/O completion by hundreds of milliseconds until it injects more.
    /// </summary>
    /// <remarks>With <see cref="Settings.VirtualTime"/> the run has a clock of its own (<see cref="VirtualTimeProvider"/>): the bus
    /// judges leases by it, every wait of the worker is a timer on it, each CPU part advances it, and the mode's loop jumps it to its
    /// next timer whenever it has nothing to run. The result is then exact: the same on every machine and at any load.</remarks>
    public static Task<ModeResult> RunAsync(string modeName, Settings settings, Timeline? timeline = null)
    {
        ArgumentNullException.ThrowIfNull(settings);
        Mode mode = CreateMode(modeName);
        if (settings.VirtualTime)
        {
            if (!mode.RunsOnVirtualTime)
            {
                throw new ArgumentOutOfRangeException(nameof(modeName), modeName, $"The {modeName} mode cannot run on virtual time: its threads cannot tell when the run has nothing to do. {CommandLine.VirtualTimeModesText}");
            }

            mode.Clock = new VirtualTimeProvider();
        }

        TimeProvider clock = (TimeProvider?)mode.Clock ?? TimeProvider.System;
        LeaseBus bus = LeaseBus.For(settings, clock);
        var worker = new Worker(bus, mode, settings, timeline);
        var completion = new TaskCompletionSource<ModeResult>(TaskCreationOptions.RunContinuationsAsynchronously);

        var driver = new Thread(() =>
        {
            try
            {
                if (!settings.VirtualTime)
                {
                    // Leave the previous run's garbage out of this run's CPU time.
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    GC.Collect();
                }

                // The bystander measures the machine's own delays, which virtual time does not see.
                using StallMonitor? monitor = settings.VirtualTime ? null : new StallMonitor();
                TimeSpan cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
                TimeSpan? loopCpuBefore = NativeTime.CurrentThreadCpuTime();
                long start = clock.GetTimestamp();
                timeline?.Start(clock);
                mode.Run(worker.RunAsync);
                TimeSpan makespan = clock.GetElapsedTime(start);
                TimeSpan? loopCpu = NativeTime.CurrentThreadCpuTime() - loopCpuBefore;
                TimeSpan cpuTime = Process.GetCurrentProcess().TotalProcessorTime - cpuBefore;
                monitor?.Dispose();

                int? cpuThreads = mode.CpuThreads(settings.CpuKind);
                completion.SetResult(new ModeResult(
                    mode.Name,
                    mode.RunsOn,
                    bus.Totals(),
                    makespan,
                    LowerBound.For(settings, cpuThreads),
                    cpuThreads,
                    cpuTime - (monitor?.OwnCpuTime ?? TimeSpan.Zero),
                    mode.CpuThreads(CpuKind.Spin) == 1 ? loopCpu : null,
                    worker.PeakBusyThreads,
                    monitor?.WorstStall ?? TimeSpan.Zero,
                    monitor?.WorstThreadPoolDelay ?? TimeSpan.Zero,
                    (mode as SeedPrioritizeMode)?.Laps,
                    worker.WorstTimerLateness));
            }
            catch (Exception ex)
            {
                completion.SetException(new InvalidOperationException($"The {modeName} run failed: {ex.Message}", ex));
            }
        })
        { Name = $"LeaseWorker {modeName}", IsBackground = true };
        driver.Start();
        return completion.Task;
    }

    /// <summary>
    /// Runs each mode once on a tiny workload, so that JIT compilation is not charged to the measured runs. For the program's main
    /// thread: it blocks on each run in turn, as continuations of an async warm-up would need a thread-pool thread, and with
    /// <c>--starve-pool</c> there may be none.
    /// </summary>
    public static void WarmUp(Settings settings, IEnumerable<string> modes)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(modes);
        if (settings.VirtualTime)
        {
            return; // nothing is measured in real time
        }

        foreach (string mode in modes)
        {
            Run(mode, WarmUpSettings(settings));
        }
    }

    /// <summary>The mode named <paramref name="name"/>, for one run (a mode holds the state of one run).</summary>
    public static Mode CreateMode(string name) => name switch
    {
        "threadpool" => new ThreadPoolMode(),
        "single" => new SingleThreadMode(),
        "seed-prioritize" => new SeedPrioritizeMode(),
        "priority" => new PriorityMode(),
        PriorityThreadsMode.ModeName => new PriorityThreadsMode(Environment.ProcessorCount), // one thread per core
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"The modes are {string.Join(", ", CommandLine.KnownModes)}."),
    };

    // Long enough for the hot methods to reach tier-1 JIT (30 calls each), at a scale where it takes a fraction of a second.
    private static Settings WarmUpSettings(Settings settings) =>
        settings with { Messages = 4, Steps = 10, TimeScale = Math.Min(settings.TimeScale, 0.005) };
}
