using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// The wake-up of parked workers: post one callback while every thread is idle, and time post to start. Between samples the
/// client sleeps 1 ms, so the threads spin out and park again. The "wake-up" in the flood's bound.
/// </summary>
internal static class WakeUp
{
    public static double P50Us(IWorkers workers, int samples)
    {
        var arrived = new long[1];
        SendOrPostCallback callback = static s => Volatile.Write(ref ((long[])s!)[0], Stopwatch.GetTimestamp());
        var latencies = new long[samples];
        for (int i = -20; i < samples; i++)
        {
            Thread.Sleep(1);
            Volatile.Write(ref arrived[0], 0);
            long posted = Stopwatch.GetTimestamp();
            workers.Post(true, callback, arrived);
            var spinner = default(SpinWait);
            long deadline = posted + (10 * Stopwatch.Frequency);
            while (Volatile.Read(ref arrived[0]) == 0)
            {
                if (Stopwatch.GetTimestamp() > deadline)
                {
                    throw new TimeoutException($"{workers.Name}: a posted callback did not start within 10 s.");
                }

                spinner.SpinOnce(sleep1Threshold: -1);
            }

            if (i >= 0)
            {
                latencies[i] = Volatile.Read(ref arrived[0]) - posted;
            }
        }

        Array.Sort(latencies);
        return Harness.HarnessResult.Us(latencies[samples / 2]);
    }
}
