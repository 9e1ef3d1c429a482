using System;
using System.Runtime.InteropServices;
using System.Threading;

namespace LeaseWorker.Core;

/// <summary>
/// The two clocks the CPU parts need and .NET does not expose: the calling thread's CPU time (so a spinning CPU part burns exactly
/// its duration of CPU, however often the OS takes the core away: extra threads cannot make CPU work finish sooner), and a sleep
/// finer than <see cref="Thread.Sleep(TimeSpan)"/>, which rounds down to whole milliseconds (a 2.5 ms slice would sleep 2 ms).
/// </summary>
public static partial class NativeTime
{
    private const int LinuxClockThreadCpuTime = 3;
    private const int MacClockThreadCpuTime = 16;

    /// <summary>Gets the CPU time the calling thread has used, or null where this platform has no per-thread clock here.</summary>
    public static TimeSpan? CurrentThreadCpuTime()
    {
        if (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS())
        {
            int clock = OperatingSystem.IsLinux() ? LinuxClockThreadCpuTime : MacClockThreadCpuTime;
            return ClockGetTime(clock, out Timespec now) == 0 ? now.ToTimeSpan() : null;
        }

        if (OperatingSystem.IsWindows())
        {
            return GetThreadTimes(GetCurrentThread(), out _, out _, out long kernel, out long user)
                ? TimeSpan.FromTicks(kernel + user)
                : null;
        }

        return null;
    }

    /// <summary>Blocks the calling thread for <paramref name="duration"/> without using the CPU, to within the OS's timer slack.</summary>
    public static void Sleep(TimeSpan duration)
    {
        if (duration <= TimeSpan.Zero)
        {
            return;
        }

        if (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS())
        {
            var request = Timespec.From(duration);
            while (NanoSleep(ref request, out Timespec remaining) != 0 && Marshal.GetLastPInvokeError() == 4 /* EINTR */)
            {
                request = remaining;
            }

            return;
        }

        Thread.Sleep(duration);
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clockId, out Timespec time);

    [LibraryImport("libc", EntryPoint = "nanosleep", SetLastError = true)]
    private static partial int NanoSleep(ref Timespec request, out Timespec remaining);

    [LibraryImport("kernel32.dll")]
    private static partial IntPtr GetCurrentThread();

    [LibraryImport("kernel32.dll")]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool GetThreadTimes(IntPtr thread, out long creation, out long exit, out long kernel, out long user);

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public nint Seconds;
        public nint Nanoseconds;

        public static Timespec From(TimeSpan value) => new()
        {
            Seconds = (nint)(value.Ticks / TimeSpan.TicksPerSecond),
            Nanoseconds = (nint)(value.Ticks % TimeSpan.TicksPerSecond * 100),
        };

        public readonly TimeSpan ToTimeSpan() => TimeSpan.FromTicks(Seconds * TimeSpan.TicksPerSecond + Nanoseconds / 100);
    }
}
