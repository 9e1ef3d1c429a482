using System;
using System.Diagnostics;
using System.Threading;

namespace LeaseWorker.Core;

/// <summary>The CPU part of a processing step: it holds the thread for its whole duration, as CPU-bound code does.</summary>
public static class CpuWork
{
    /// <summary>Runs one CPU part (or one slice of it) on the calling thread.</summary>
    public static void Run(CpuKind kind, TimeSpan duration)
    {
        if (duration <= TimeSpan.Zero)
        {
            return;
        }

        if (kind == CpuKind.Sleep)
        {
            NativeTime.Sleep(duration);
            return;
        }

        // Spin until this thread has used `duration` of CPU time, not of wall time: when more threads spin than there are cores,
        // each one takes longer, as real CPU work does. Without a per-thread clock, fall back to wall time.
        if (NativeTime.CurrentThreadCpuTime() is { } start)
        {
            while (NativeTime.CurrentThreadCpuTime()!.Value - start < duration)
            {
                Thread.SpinWait(20);
            }

            return;
        }

        long deadline = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < deadline)
        {
            Thread.SpinWait(20);
        }
    }
}
