using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The process-wide watcher of the time quota (<see cref="PriorityContextOptions.TimeSlice"/>): one dedicated background thread (never
/// the thread pool, so a starved pool cannot delay it) that ticks every quarter of the shortest watched slice (at least every
/// millisecond) and lets each watched context compare its dispatch counter with the previous tick's
/// (<see cref="PriorityContext.TickTimeSlice"/>); a <see cref="PriorityThreadPool"/> is watched the same way, one dispatch counter and
/// one quota flag per thread (C1-N, C2-N in Checkpoints/PriorityThreadPool.Checkpoint.cs). The loops and the pools' threads
/// themselves do nothing per item and read no clock.
/// </summary>
/// <remarks>
/// <para>Idle cost: when every watched loop is parked, the thread sleeps without a timeout until a checkpoint wakes it or a context
/// registers. A loop leaving Park does nothing for the clock: the wake-up of a parked loop has nothing but the wake itself on its
/// critical path (issue 22; it used to set the clock's event there, and the clock thread, woken at that moment, competed with the loop
/// for a core: a parked loop woke at 2x a <see cref="ManualResetEventSlim"/>).</para>
/// <para>Invariant (S1): while a watched loop (a pool: any of its threads) runs an item, either the thread is not dormant, or that
/// loop's (that pool thread's) quota flag holds
/// <see cref="PriorityContext.SliceClockDormant"/>, so the item's next checkpoint wakes the thread. How: before it sleeps, the thread
/// writes <see cref="_dormant"/> = 1, then the sentinel into every watched context's flag (interlocked writes, in that order), then
/// reads every loop's parked flag and sleeps only if all are parked (else it clears <see cref="_dormant"/> and ticks on; a sentinel left
/// in an awake loop costs that loop one slow checkpoint). The sentinel makes a checkpoint's fast path fail; its slow path clears the
/// sentinel with a compare-exchange (a full fence) and then reads <see cref="_dormant"/> (<see cref="OnCheckpointFoundDormant"/>): having
/// seen the sentinel, which was written after <see cref="_dormant"/> = 1, it sees 1 unless another checkpoint or a registration has
/// already woken the thread. The wake-up is an auto-reset event, which keeps a signal set before the thread waits, so a wake-up
/// between the thread's check and its wait is not lost; a stale signal costs one extra tick. Only the clock thread writes the sentinel
/// and the raises (C1), so it never overwrites a raise it has not already superseded.</para>
/// <para>What S1 costs the quota (C2 in Checkpoints/PriorityContext.Checkpoint.cs): an item that starts while the clock sleeps is watched
/// from its first checkpoint, not from its start. An item that never reaches a checkpoint cannot be told to yield anyway.</para>
/// <para>The loop never takes the clock's lock: <see cref="OnCheckpointFoundDormant"/> is an interlocked exchange and, only when the
/// thread was dormant, an event set. (A monitor pulse under the lock the ticking thread holds while it walks the contexts would, on
/// .NET 10, where a contended monitor attaches a managed lock object, put allocations on the loop thread.)</para>
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
    private readonly List<ISliceWatched> _watched = [];
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

    /// <summary>Starts watching <paramref name="context"/>, whose loop (or pool threads) has just started.</summary>
    public void Register(ISliceWatched context)
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

    /// <summary>Stops watching <paramref name="context"/>, whose loop (or last pool thread) is ending.</summary>
    public void Unregister(ISliceWatched context)
    {
        lock (_lock)
        {
            _watched.Remove(context);
        }
    }

    /// <summary>Called by a checkpoint that found (and cleared, with a full fence) the dormant sentinel in its quota flag: wakes the
    /// thread if it still sleeps (see S1). No lock; only the first of several such checkpoints sets the event.</summary>
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
                foreach (ISliceWatched context in _watched)
                {
                    anyAwake |= context.TickTimeSlice(now);
                    periodMs = Math.Min(periodMs, context.TimeSliceTickMilliseconds);
                }
            }

            Interlocked.Increment(ref _ticks);
            if (!anyAwake)
            {
                Interlocked.Exchange(ref _dormant, 1); // before the sentinels (S1)
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

    /// <summary>S1: writes the dormant sentinel into every watched context's quota flag, then says whether every loop is parked.</summary>
    private bool MarkDormantAndCheckAllParked()
    {
        lock (_lock)
        {
            foreach (ISliceWatched context in _watched)
            {
                context.MarkSliceClockDormant();
            }

            foreach (ISliceWatched context in _watched)
            {
                if (!context.IsParked)
                {
                    return false;
                }
            }

            return true;
        }
    }
}
