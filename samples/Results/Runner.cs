using System;
using System.Collections.Generic;
using System.Diagnostics;

namespace Results;

/// <summary>Runs the variants and measures them.</summary>
internal static class Runner
{
    /// <summary>Runs one variant once on a fresh network: wall time, time to the last urgent result, process CPU time, allocated bytes.</summary>
    public static RunResult Run(Variant variant, Workload workload, Settings settings)
    {
        var network = new SimulatedNetwork(workload, settings.Window);
        var recorder = new Recorder(workload, settings.Work);

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        using var process = Process.GetCurrentProcess();
        TimeSpan cpuBefore = process.TotalProcessorTime;
        long bytesBefore = GC.GetTotalAllocatedBytes(precise: true);
        long start = Stopwatch.GetTimestamp();

        Variants.Run(variant, network, recorder);

        long bytes = GC.GetTotalAllocatedBytes(precise: true) - bytesBefore;
        process.Refresh();
        TimeSpan cpu = process.TotalProcessorTime - cpuBefore;
        long lastUrgent = recorder.LastUrgentFinished();
        return new RunResult(
            variant,
            workload.Count,
            workload.UrgentCount,
            Measured: true,
            Total: Stopwatch.GetElapsedTime(start, recorder.LastFinished()),
            LastUrgent: lastUrgent == 0 ? TimeSpan.Zero : Stopwatch.GetElapsedTime(start, lastUrgent),
            cpu,
            bytes,
            recorder.Processed,
            recorder.CountNotProcessedExactlyOnce(),
            recorder.CountOvertakenUrgent());
    }

    /// <summary>A small run of every variant, so that JIT compilation is not charged to the measured runs.</summary>
    public static void WarmUp(Settings settings)
    {
        var small = new Workload(200, settings.UrgentEvery);
        Settings quick = settings with { Window = TimeSpan.FromMilliseconds(20) };
        foreach (Variant variant in settings.Variants)
        {
            Run(variant, small, quick);
        }
    }

    /// <summary>Runs every variant at every size. The WhenAny loop above the limit is not run but extrapolated from its largest run.</summary>
    public static IReadOnlyList<RunResult> RunAll(Settings settings, Action<RunResult>? progress = null)
    {
        var results = new List<RunResult>();
        RunResult? largestWhenAny = null;
        foreach (int size in settings.Sizes)
        {
            var workload = new Workload(size, settings.UrgentEvery);
            foreach (Variant variant in settings.Variants)
            {
                RunResult result;
                if (variant == Variant.WhenAnyLoop && size > settings.WhenAnyLimit)
                {
                    result = Extrapolate(largestWhenAny, workload);
                }
                else
                {
                    result = Run(variant, workload, settings);
                    if (variant == Variant.WhenAnyLoop && (largestWhenAny is null || size > largestWhenAny.Calls))
                    {
                        largestWhenAny = result;
                    }
                }

                results.Add(result);
                progress?.Invoke(result);
            }
        }

        return results;
    }

    // The WhenAny loop's cost per result grows linearly with the number of calls (each lap touches every pending call), so its
    // CPU time and allocations grow with the square. Scaled from the largest measured run; wall time is not extrapolated.
    private static RunResult Extrapolate(RunResult? measured, Workload workload)
    {
        if (measured is null)
        {
            return new RunResult(Variant.WhenAnyLoop, workload.Count, workload.UrgentCount, false, TimeSpan.Zero, TimeSpan.Zero,
                TimeSpan.Zero, 0, 0, 0, 0);
        }

        double square = Math.Pow((double)workload.Count / measured.Calls, 2);
        return new RunResult(
            Variant.WhenAnyLoop,
            workload.Count,
            workload.UrgentCount,
            Measured: false,
            Total: TimeSpan.Zero,
            LastUrgent: TimeSpan.Zero,
            Cpu: measured.Cpu * square,
            AllocatedBytes: (long)(measured.AllocatedBytes * square),
            Processed: 0,
            NotProcessedExactlyOnce: 0,
            OvertakenUrgent: 0);
    }
}
