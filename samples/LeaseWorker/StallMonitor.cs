using System;
using System.Diagnostics;
using System.Threading;

namespace LeaseWorker;

/// <summary>
/// A bystander thread that sleeps 5 ms at a time and records how much longer than that it slept: the worst delay the machine itself
/// (other processes, the OS) imposed on a thread that wanted to run during a mode's run. On a busy machine this explains lateness
/// that no scheduler inside the process could have avoided. Its own CPU time is reported so it can be left out of the mode's.
/// </summary>
public sealed class StallMonitor : IDisposable
{
    private static readonly TimeSpan s_period = TimeSpan.FromMilliseconds(5);

    private readonly Thread _thread;
    private volatile bool _stop;
    private long _worstTicks;
    private TimeSpan _ownCpu;

    public StallMonitor()
    {
        _thread = new Thread(Watch) { IsBackground = true, Name = "LeaseWorker stall monitor" };
        _thread.Start();
    }

    /// <summary>The longest oversleep seen so far.</summary>
    public TimeSpan WorstStall => TimeSpan.FromTicks(Interlocked.Read(ref _worstTicks));

    /// <summary>The CPU time the monitor itself used (valid after <see cref="Dispose"/>).</summary>
    public TimeSpan OwnCpuTime => _ownCpu;

    public void Dispose()
    {
        _stop = true;
        _thread.Join();
    }

    private void Watch()
    {
        TimeSpan cpuStart = NativeTime.CurrentThreadCpuTime() ?? TimeSpan.Zero;
        while (!_stop)
        {
            long start = Stopwatch.GetTimestamp();
            NativeTime.Sleep(s_period);
            long over = (Stopwatch.GetElapsedTime(start) - s_period).Ticks;
            if (over > Interlocked.Read(ref _worstTicks))
            {
                Interlocked.Exchange(ref _worstTicks, over);
            }
        }

        _ownCpu = (NativeTime.CurrentThreadCpuTime() ?? TimeSpan.Zero) - cpuStart;
    }
}
