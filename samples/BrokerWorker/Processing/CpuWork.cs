using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace BrokerWorker.Processing;

/// <summary>
/// CPU work of a fixed amount: a spin of a calibrated number of iterations. Not "spin until the wall clock says D": when more
/// threads spin than there are cores (4 worker processes on 2 cores), each spin then takes longer, as real work does, so the
/// CPU bound of a run is what the cores can do, and a mode cannot finish sooner by being descheduled.
/// </summary>
public static class CpuWork
{
    private static double s_sink;

    /// <summary>Measures spin iterations per millisecond on this machine: the best of several short rounds (the least disturbed).</summary>
    public static double Calibrate()
    {
        const long Iterations = 200_000;
        Spin(Iterations); // compile it
        double best = 0;
        for (int round = 0; round < 15; round++)
        {
            long start = Stopwatch.GetTimestamp();
            Spin(Iterations);
            double ms = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
            best = Math.Max(best, Iterations / ms);
        }

        return best;
    }

    /// <summary>Runs <paramref name="duration"/> of calibrated CPU work on the calling thread.</summary>
    public static void Run(TimeSpan duration, double spinsPerMs)
    {
        if (duration > TimeSpan.Zero)
        {
            Spin((long)(duration.TotalMilliseconds * spinsPerMs));
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Spin(long iterations)
    {
        double x = 1.0;
        for (long i = 0; i < iterations; i++)
        {
            x = (x * 1.000000001) + 1e-9;
        }

        s_sink = x;
    }
}
