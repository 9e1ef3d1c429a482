using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The time quota on the pool: the single loop's protocols C1, C2 and S1 (Checkpoints/PriorityContext.Checkpoint.cs, SliceClock.cs),
// restated for N threads. The loop's quota assumes one running item, watched through one dispatch count; the pool runs up to N
// items at once, so each thread is watched on its own, with its own count (PoolWorker.CountDispatch, the count the watchdog reads)
// and its own quota flag (PoolWorker.SliceExpired).
//
// C1-N. A thread's flag holds 0; or the thread's dispatch count K when the slice clock saw the thread's item K running for a whole
// TimeSlice while some level's bit was set; or SliceClockDormant (S1). A thread's count goes up by one after each dequeue, before the
// item runs, so while item K runs on that thread the count is K, and a raise is only believed by a checkpoint of that thread while
// its count equals it. Only the slice clock writes raises and the sentinel (TickTimeSlice, MarkSliceClockDormant); only the thread's
// own checkpoints clear its flag, with a compare-exchange that cannot undo a newer write. So the dispatch loop does nothing for the
// quota: no write, no clock read, no change in RunWorker; a checkpoint's fast path reads one more field (the flag) than before.
//
// C2-N. As C2, per thread: the clock remembers the first tick at which it saw count K on a thread that was not parked. A checkpoint
// that later sees the same count on that thread is inside item K (a thread runs no checkpoint between items), which had started
// before that tick, so it has run at least one slice. A thread that ended item K and has not dequeued since keeps count K, but runs
// no checkpoint until it has; a parked thread resets its record. The bounds are the loop's: an item over its quota is told at its
// first checkpoint between 1 and about 1.5 slices after it started (work waiting), else within a tick after work is queued.
//
// When a raised checkpoint yields (the N-thread part). On the loop, an item over its quota yields whenever other work waits. On the
// pool, waiting work usually has a thread to run it, so the item yields only when its yield is what lets that work run: work waits at
// a level below its cap while every thread is running an item (no idle thread will take it; _runningTotal, a moment's look: in
// lock-free mode it counts the active threads, one spinning for work before it parks included, so now and then a yield is one that
// thread would have made unneeded: one extra trip through the queue, never a missed one), or work
// waits at the item's own level while that level is at its cap (only a slot of that level frees it, and this item holds one). A
// checkpoint that finds neither clears the flag, so the ones that follow take the fast path; the clock raises it again at its next
// tick while the item runs on and work may wait. Work waiting above the caller's level makes a checkpoint yield whatever the quota.
// Unlike the loop's, a pool checkpoint does not clear stale mask bits (only a dequeuing thread does: I1, and LevelQueues' M1 in
// lock-free mode), so while a stale bit lasts (typically the running item's own level, until the next dequeue) the clock may raise
// the flag at each tick, and each raise costs one slow checkpoint: a few field reads, a quarter slice apart.
//
// S1-N. The clock sleeps only when every thread of every watched scheduler is parked. Before it sleeps it writes the sentinel into
// every thread's flag (then checks the parked flags), so whichever thread wakes and reaches a checkpoint first wakes the clock.
public sealed partial class PriorityThreadPool : ISliceWatched
{
    /// <summary>The slice clock's period for this pool: a quarter of the slice, at least 1 ms.</summary>
    internal int TimeSliceTickMilliseconds => TimeSliceOption.ToTickMilliseconds(TimeSlice);

    /// <summary>The time quota of one item on one thread (<see cref="PriorityThreadPoolOptions.TimeSlice"/>), or <see langword="null"/> (off).</summary>
    internal TimeSpan? TimeSlice { get; }

    /// <summary>For tests: the quota flag of thread <paramref name="thread"/> (C1-N).</summary>
    internal long SliceExpiredFlag(int thread) => Volatile.Read(ref _workers[thread].SliceExpired);

    /// <summary>Whether every thread is parked (or about to park): the slice clock may sleep (S1-N). Any thread.</summary>
    internal bool AllThreadsParked
    {
        get
        {
            foreach (PoolWorker worker in _workers)
            {
                if (Volatile.Read(ref worker.Parked) == 0)
                {
                    return false;
                }
            }

            return true;
        }
    }

    int ISliceWatched.TimeSliceTickMilliseconds => TimeSliceTickMilliseconds;

    bool ISliceWatched.IsParked => AllThreadsParked;

    bool ISliceWatched.TickTimeSlice(long now) => TickTimeSlice(now);

    void ISliceWatched.MarkSliceClockDormant() => MarkSliceClockDormant();

    /// <summary>
    /// One tick of the slice clock (or of a test, with made-up timestamps): raises the flag of each thread whose item has been running
    /// since a tick at least one slice ago while work may wait (C2-N). Returns whether any thread is awake (not parked).
    /// </summary>
    /// <param name="now">A <see cref="System.Diagnostics.Stopwatch.GetTimestamp"/> value (a test's own clock when driven by tests).</param>
    internal bool TickTimeSlice(long now)
    {
        bool anyAwake = false;
        foreach (PoolWorker worker in _workers)
        {
            if (Volatile.Read(ref worker.Parked) != 0)
            {
                worker.SliceSeenCount = -1; // parked: no item runs; the next one starts a fresh count
                continue;
            }

            anyAwake = true;
            if (_timeSliceTicks == 0)
            {
                continue; // no quota (only tests tick such a pool)
            }

            long count = worker.DispatchCount;
            if (count != worker.SliceSeenCount)
            {
                worker.SliceSeenCount = count;
                worker.SliceSeenAt = now;
            }
            else if (count != 0 && now - worker.SliceSeenAt >= _timeSliceTicks && _queues.NonEmptyMask != 0)
            {
                Volatile.Write(ref worker.SliceExpired, count); // C1-N: only while work may wait
            }
        }

        return anyAwake;
    }

    /// <summary>The slice clock, before it sleeps: makes the next checkpoint of any thread wake it (S1-N).</summary>
    internal void MarkSliceClockDormant()
    {
        foreach (PoolWorker worker in _workers)
        {
            Interlocked.Exchange(ref worker.SliceExpired, PriorityContext.SliceClockDormant);
        }
    }

    /// <summary>The checkpoint's slow path for the quota, on <paramref name="worker"/>'s thread, whose flag is not 0: whether its item
    /// has used up its quota and its yield is what lets waiting work run (C1-N).</summary>
    private bool QuotaUsedUp(PoolWorker worker)
    {
        long expired = Volatile.Read(ref worker.SliceExpired);
        if (expired == PriorityContext.SliceClockDormant)
        {
            // The clock sleeps (S1-N): wake it, so it watches this item from now on. The compare-exchange is S1's full fence.
            Interlocked.CompareExchange(ref worker.SliceExpired, 0, PriorityContext.SliceClockDormant);
            SliceClock.Shared.OnCheckpointFoundDormant();
            return false;
        }

        if (expired == worker.DispatchCount && WorkWaitsOnlyThisThreadCanFree(worker))
        {
            return true; // the flag stays; the next item of this thread finds it stale and clears it
        }

        // Raised for an item that has ended, or the waiting work has a thread: clear it, so the checkpoints that follow take the
        // fast path. The clock raises it again while the item runs on and work may wait.
        Interlocked.CompareExchange(ref worker.SliceExpired, 0, expired);
        return false;
    }

    /// <summary>A moment's look: work waits that no idle thread will take (every thread runs an item), or work waits at this item's
    /// own level while the level is at its cap (this item holds one of its slots).</summary>
    private bool WorkWaitsOnlyThisThreadCanFree(PoolWorker worker)
    {
        if (Volatile.Read(ref _runningTotal) >= ThreadCount && HasRunnableWorkAbove(-1))
        {
            return true;
        }

        int own = worker.AccountedLevel;
        return own >= 0 && (Volatile.Read(ref _saturated) & (1L << own)) != 0 && !_queues.IsEmpty(own);
    }

    /// <summary>After the threads started: the slice clock watches them when the pool has a quota (and tests do not drive it).</summary>
    private void StartSliceWatch()
    {
        if (_timeSliceWatched)
        {
            SliceClock.Shared.Register(this);
        }
    }

    /// <summary>As the last thread ends.</summary>
    private void StopSliceWatch()
    {
        if (_timeSliceWatched)
        {
            SliceClock.Shared.Unregister(this);
        }
    }
}
