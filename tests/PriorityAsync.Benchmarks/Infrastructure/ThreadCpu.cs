using System;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>The CPU time of one of the library's own threads, found by name (Linux: /proc/self/task/*/schedstat, in nanoseconds), of
/// the calling thread and of the process (<c>clock_gettime</c>).</summary>
public static class ThreadCpu
{
    private const int ClockProcessCpuTime = 2; // CLOCK_PROCESS_CPUTIME_ID
    private const int ClockThreadCpuTime = 3; // CLOCK_THREAD_CPUTIME_ID

    /// <summary>Nanoseconds the calling thread has spent on a CPU (Linux).</summary>
    public static long CurrentThreadNanoseconds() => Clock(ClockThreadCpuTime, "CLOCK_THREAD_CPUTIME_ID");

    /// <summary>Nanoseconds every thread of the process, those that ended too, has spent on a CPU (Linux).</summary>
    public static long ProcessNanoseconds() => Clock(ClockProcessCpuTime, "CLOCK_PROCESS_CPUTIME_ID");

    /// <summary>Nanoseconds the first thread whose OS name starts with <paramref name="namePrefix"/> has spent on a CPU; -1 when there is
    /// no such thread or no /proc. The OS keeps 15 characters of a thread's name.</summary>
    public static long Nanoseconds(string namePrefix)
    {
        if (!Directory.Exists("/proc/self/task"))
        {
            return -1;
        }

        string prefix = namePrefix.Length > 15 ? namePrefix[..15] : namePrefix;
        foreach (string task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                if (File.ReadAllText(Path.Combine(task, "comm")).StartsWith(prefix, StringComparison.Ordinal))
                {
                    string schedstat = File.ReadAllText(Path.Combine(task, "schedstat"));
                    return long.Parse(schedstat.Split(' ')[0], CultureInfo.InvariantCulture);
                }
            }
            catch (IOException)
            {
                // the task ended while we looked
            }
        }

        return -1;
    }

    private static long Clock(int clock, string name) => ClockGetTime(clock, out Timespec time) == 0
        ? (time.Seconds * 1_000_000_000L) + time.Nanoseconds
        : throw new InvalidOperationException($"clock_gettime({name}) failed: this harness needs Linux.");

    [DllImport("libc", EntryPoint = "clock_gettime")]
    private static extern int ClockGetTime(int clock, out Timespec time);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }
}
