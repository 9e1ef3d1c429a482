using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The process-wide watcher of the time quota (<see cref="PriorityContextOptions.TimeSlice"/>): one dedicated background thread (never
/// the thread pool, so a starved pool cannot delay it) that ticks every quarter of the shortest watched slice (at least every
/// millisecond) and lets each watched context compare its dispatch counter with the previous tick's
/// (<see cref="PriorityContext.TickTimeSlice"/>). The loops themselves do nothing per item and read no clock.
/// </summary>
/// <remarks>
/// <para>Idle cost: when every watched loop is parked, the thread sleeps without a timeout until a loop leaves <c>Park</c> or a context
/// registers. Invariant (S1): while a watched loop is not parked, the thread is not dormant, or that loop will see
/// <see cref="_dormant"/> == 1 when it leaves Park and wake the thread. How: the thread writes <see cref="_dormant"/> = 1 with a full
/// fence, then reads every loop's parked flag, and sleeps only if all are parked; a loop leaving Park writes its parked flag = 0, issues
/// a full fence, then reads <see cref="_dormant"/> (<see cref="OnLoopWoke"/>). Fences on both sides (the store-buffer pattern): either
/// the thread sees the loop awake, or the loop sees the thread dormant. The wake-up is an auto-reset event, which keeps a signal set
/// before the thread waits, so a wake-up between the thread's check and its wait is not lost; a stale signal costs one extra tick.</para>
/// <para>The loop never takes the clock's lock: <see cref="OnLoopWoke"/> is an interlocked exchange and, only when the thread was
/// dormant, an event set. (It used to pulse a monitor under the lock the ticking thread holds while it walks the contexts: on .NET 10,
/// where a contended monitor attaches a managed lock object, that put allocations on a loop thread that had just woken.)</para>
/// <para>A context registers when its loop starts and unregisters when it ends. Registrations are few; they are kept in a list under
/// <see cref="_lock"/>, which only registration and the ticking thread take.</para>
/// <para>Why not the <see cref="Alarm"/>: it rings each registration once, at a due time, and is built for rare re-arming under a
/// context's timer lock; the quota needs a steady tick while loops are busy and none while they are parked, which this small loop
/// gives without touching the timers' protocol (T0, A1).</para>
/// </remarks>
internal sealed class SliceClock
{
    private static SliceClock? s_shared;

    private readonly object _lock = new();
    private readonly List<PriorityContext> _watched = [];
    private readonly AutoResetEvent _signal = new(false);
    private Thread? _thread;
    private long _ticks;

    // 1: the thread sleeps (or is about to) until a loop wakes or a context registers. See S1.
    private int _dormant;

    /// <summary>Gets the process-wide slice clock.</summary>
    public static SliceClock Shared => Volatile.Read(ref s_shared) ?? CreateShared();

    /// <summary>For tests and measurements: how many ticks the thread has made.</summary>
    internal long Ticks => Interlocked.Read(ref _ticks);

    /// <summary>For tests: whether the thread sleeps until a loop wakes.</summary>
    internal bool IsDormant => Volatile.Read(ref _dormant) != 0;

    /// <summary>Starts watching <paramref name="context"/>, whose loop has just started.</summary>
    public void Register(PriorityContext context)
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

    /// <summary>Stops watching <paramref name="context"/>, whose loop is ending.</summary>
    public void Unregister(PriorityContext context)
    {
        lock (_lock)
        {
            _watched.Remove(context);
        }
    }

    /// <summary>Called by a loop as it leaves Park, after it wrote its parked flag = 0: wakes a dormant thread (see S1). No lock.</summary>
    public void OnLoopWoke()
    {
        Interlocked.MemoryBarrier(); // between the loop's parked = 0 and this read (S1)
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
                foreach (PriorityContext context in _watched)
                {
                    anyAwake |= context.TickTimeSlice(now);
                    periodMs = Math.Min(periodMs, context.TimeSliceTickMilliseconds);
                }
            }

            Interlocked.Increment(ref _ticks);
            if (!anyAwake)
            {
                Interlocked.Exchange(ref _dormant, 1); // full fence before the re-check (S1)
                if (AllParked())
                {
                    _signal.WaitOne(); // until Register or OnLoopWoke, which clear _dormant and set the event
                    continue;
                }

                Volatile.Write(ref _dormant, 0);
            }

            _signal.WaitOne(periodMs == int.MaxValue ? Timeout.Infinite : periodMs);
        }
    }

    private bool AllParked()
    {
        lock (_lock)
        {
            return AllParkedLocked();
        }
    }

    private bool AllParkedLocked()
    {
        foreach (PriorityContext context in _watched)
        {
            if (!context.IsParked)
            {
                return false;
            }
        }

        return true;
    }
}
