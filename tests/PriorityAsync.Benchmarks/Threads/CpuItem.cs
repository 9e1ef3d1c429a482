using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// A CPU-bound item of a fixed amount of work (not of a fixed wall time: an item whose thread loses its core takes longer, as real
/// work does), calibrated once per process to take about <see cref="TargetUs"/> on this machine.
/// </summary>
internal static class CpuItem
{
    public const double TargetUs = 10.0;

    private static int s_iterations;
    private static long s_sink;

    /// <summary>The work of one item in iterations of <see cref="Work"/>, calibrated on first use.</summary>
    public static int Iterations => s_iterations != 0 ? s_iterations : s_iterations = Calibrate();

    /// <summary>The median measured duration of one item, in microseconds (after calibration).</summary>
    public static double MeasuredUs { get; private set; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Work(int iterations)
    {
        // xorshift: each step depends on the last, so the JIT can neither vectorize nor drop it; the sink keeps the result alive.
        ulong x = 88172645463325252UL + (ulong)iterations;
        for (int i = 0; i < iterations; i++)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }

        s_sink += (long)(x & 1);
    }

    private static int Calibrate()
    {
        const int probe = 10_000;
        long warm = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(warm) < TimeSpan.FromMilliseconds(500))
        {
            Work(probe); // long enough for tiered compilation to replace the first code with optimized code
        }

        // The fastest of many samples is the work itself; slower ones were interrupted by the OS (the machine is shared).
        var samples = new double[201];
        for (int i = 0; i < samples.Length; i++)
        {
            long start = Stopwatch.GetTimestamp();
            Work(probe);
            samples[i] = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
        }

        Array.Sort(samples);
        int iterations = Math.Max(1, (int)(probe * TargetUs / samples[0]));
        for (int i = 0; i < samples.Length; i++)
        {
            long start = Stopwatch.GetTimestamp();
            Work(iterations);
            samples[i] = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
        }

        Array.Sort(samples);
        MeasuredUs = samples[samples.Length / 2];
        GC.KeepAlive(s_sink);
        return iterations;
    }
}
