using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The process-wide watcher of the time quota (<see cref="PrioritySchedulerOptions.TimeSlice"/>): one dedicated background thread (never
/// the thread pool, so a starved pool cannot delay it) that ticks every quarter of the shortest watched slice (at least every
/// millisecond) and lets each watched scheduler compare its threads' dispatch counters with the previous tick's
/// (<see cref="PriorityScheduler.TickTimeSlice"/>, [SLICE-RAISE]). The schedulers' threads do nothing per item and read no clock.
/// </summary>
/// <remarks>When every watched thread is parked, the clock sleeps without a timeout until a checkpoint wakes it or a scheduler
/// registers ([SLICE-DORMANT]); a thread leaving Park does nothing for it.</remarks>
internal sealed class SliceClock
{
    private static SliceClock? s_shared;

    private readonly object _lock = new();
    private readonly List<PriorityScheduler> _watched = [];
    private readonly AutoResetEvent _signal = new(false);
    private Thread? _thread;
    private long _ticks;

    // 1: the thread sleeps (or is about to) until a checkpoint wakes it or a scheduler registers ([SLICE-DORMANT]).
    private int _dormant;

    /// <summary>Gets the process-wide slice clock.</summary>
    public static SliceClock Shared => Volatile.Read(ref s_shared) ?? CreateShared();

    /// <summary>For tests and measurements: how many ticks the thread has made.</summary>
    internal long Ticks => Interlocked.Read(ref _ticks);

    /// <summary>For tests: whether the thread sleeps until a checkpoint wakes it.</summary>
    internal bool IsDormant => Volatile.Read(ref _dormant) != 0;

    /// <summary>Starts watching <paramref name="context"/>, which has just started running.</summary>
    public void Register(PriorityScheduler context)
    {
        lock (_lock)
        {
            _watched.Add(context);
            EnsureThread();
        }

        // A new, possibly shorter, period; and a dormant thread must tick again.
        Interlocked.Exchange(ref _dormant, 0);
        _signal.Set();
    }

    /// <summary>Stops watching <paramref name="context"/>, which is ending.</summary>
    public void Unregister(PriorityScheduler context)
    {
        lock (_lock)
        {
            _watched.Remove(context);
        }
    }

    /// <summary>Called by a checkpoint that found (and cleared, with a full fence) the dormant sentinel in its quota flag: wakes the
    /// thread if it still sleeps ([SLICE-DORMANT]). No lock; only the first of several such checkpoints sets the event.</summary>
    public void OnCheckpointFoundDormant()
    {
        if (Volatile.Read(ref _dormant) != 0 && Interlocked.Exchange(ref _dormant, 0) != 0)
        {
            _signal.Set();
        }
    }

    private static SliceClock CreateShared()
    {
        Interlocked.CompareExchange(ref s_shared, new SliceClock(), null);
        return s_shared!;
    }

    private void EnsureThread()
    {
        if (_thread is null)
        {
            // Not captured: the thread outlives whatever code first started a loop.
            using (ExecutionContext.SuppressFlow())
            {
                _thread = new Thread(Run) { IsBackground = true, Name = "PriorityAsync time slices" };
                _thread.Start();
            }
        }
    }

    private void Run()
    {
        while (true)
        {
            long now = Stopwatch.GetTimestamp();
            bool anyAwake = false;
            int periodMs = int.MaxValue;
            lock (_lock)
            {
                foreach (PriorityScheduler context in _watched)
                {
                    anyAwake |= context.TickTimeSlice(now);
                    periodMs = Math.Min(periodMs, context.TimeSliceTickMilliseconds);
                }
            }

            Interlocked.Increment(ref _ticks);
            if (!anyAwake)
            {
                Interlocked.Exchange(ref _dormant, 1); // before the sentinels ([SLICE-DORMANT])
                if (MarkDormantAndCheckAllParked())
                {
                    _signal.WaitOne(); // until Register or a checkpoint that found the sentinel, which clear _dormant and set the event
                    continue;
                }

                Volatile.Write(ref _dormant, 0);
            }

            _signal.WaitOne(periodMs == int.MaxValue ? Timeout.Infinite : periodMs);
        }
    }

    /// <summary>[SLICE-DORMANT]: writes the sentinel into every watched thread's quota flag, then says whether every thread is parked.</summary>
    private bool MarkDormantAndCheckAllParked()
    {
        lock (_lock)
        {
            foreach (PriorityScheduler context in _watched)
            {
                context.MarkSliceClockDormant();
            }

            foreach (PriorityScheduler context in _watched)
            {
                if (!context.AllThreadsParked)
                {
                    return false;
                }
            }

            return true;
        }
    }
}
