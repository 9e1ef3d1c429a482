using System;
using System.Diagnostics;

namespace HostedWorker;

/// <summary>Busy CPU work standing in for a real message's processing.</summary>
internal static class CpuWork
{
    public static void Run(TimeSpan duration)
    {
        long end = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        ulong x = 1;
        while (Stopwatch.GetTimestamp() < end)
        {
            for (int i = 0; i < 1_000; i++)
            {
                x = (x * 6364136223846793005UL) + 1442695040888963407UL;
            }
        }

        GC.KeepAlive(x);
    }
}
