using System;
using System.Diagnostics;
using System.Threading;
using LeaseWorker.Core;

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
    private long _worstPoolTicks;
    private long _probeQueuedAt;
    private TimeSpan _ownCpu;

    public StallMonitor()
    {
        _thread = new Thread(Watch) { IsBackground = true, Name = "LeaseWorker stall monitor" };
        _thread.Start();
    }

    /// <summary>The longest oversleep seen so far.</summary>
    public TimeSpan WorstStall => TimeSpan.FromTicks(Interlocked.Read(ref _worstTicks));

    /// <summary>
    /// The longest a work item queued to the thread pool waited to start. Timers (Task.Delay) and the bus's replies complete on the
    /// thread pool, so when the pool is short of threads (all blocked), I/O completions reach the worker late, whatever its scheduler.
    /// </summary>
    public TimeSpan WorstThreadPoolDelay => TimeSpan.FromTicks(Interlocked.Read(ref _worstPoolTicks));

    /// <summary>The CPU time the monitor itself used (valid after <see cref="Dispose"/>).</summary>
    public TimeSpan OwnCpuTime => _ownCpu;

    public void Dispose()
    {
        _stop = true;
        _thread.Join();

        // A probe still waiting for a pool thread (a starved pool may never run it) has waited at least this long.
        long queuedAt = Interlocked.Read(ref _probeQueuedAt);
        if (queuedAt != 0)
        {
            long waiting = Stopwatch.GetElapsedTime(queuedAt).Ticks;
            if (waiting > Interlocked.Read(ref _worstPoolTicks))
            {
                Interlocked.Exchange(ref _worstPoolTicks, waiting);
            }
        }
    }

    private void Watch()
    {
        TimeSpan cpuStart = NativeTime.CurrentThreadCpuTime() ?? TimeSpan.Zero;
        long laps = 0;
        while (!_stop)
        {
            // One probe in flight at a time, queued every fourth lap (20 ms): enough to see a starved pool, little extra pool traffic.
            if (++laps % 4 == 0 && Interlocked.CompareExchange(ref _probeQueuedAt, Stopwatch.GetTimestamp(), 0) == 0)
            {
                ThreadPool.UnsafeQueueUserWorkItem(static monitor => monitor.OnProbe(), this, preferLocal: false);
            }

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

    private void OnProbe()
    {
        long delay = Stopwatch.GetElapsedTime(Interlocked.Read(ref _probeQueuedAt)).Ticks;
        if (delay > Interlocked.Read(ref _worstPoolTicks))
        {
            Interlocked.Exchange(ref _worstPoolTicks, delay);
        }

        Interlocked.Exchange(ref _probeQueuedAt, 0);
    }
}
