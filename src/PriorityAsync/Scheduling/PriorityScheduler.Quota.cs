using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The time quota ([SLICE-FLAG], [SLICE-RAISE], [SLICE-DORMANT]): the slice clock raises a thread's flag when the same item has run a whole
// TimeSlice while work may wait; the thread's next checkpoint believes it only while that item still runs. The dispatch does nothing
// per item for it.
public abstract partial class PriorityScheduler
{
    /// <summary>The value of a quota flag while the slice clock sleeps ([SLICE-DORMANT]): the next checkpoint wakes it.</summary>
    internal const long SliceClockDormant = -1;

    // Stopwatch ticks of the quota; 0: none.
    private readonly long _timeSliceTicks;
    private readonly bool _timeSliceWatched;

    /// <summary>The time quota of one item on one thread, or null (off).</summary>
    internal TimeSpan? TimeSlice { get; }

    /// <summary>The slice clock's period for this scheduler: a quarter of the slice, at least 1 ms.</summary>
    internal int TimeSliceTickMilliseconds => TimeSliceOption.ToTickMilliseconds(TimeSlice);

    /// <summary>Whether every thread is parked (or about to park): the slice clock may sleep ([SLICE-DORMANT]). Any thread.</summary>
    internal bool AllThreadsParked
    {
        get
        {
            foreach (SchedulerThread thread in _threads)
            {
                if (Volatile.Read(ref thread.Parked) == 0)
                {
                    return false;
                }
            }

            return true;
        }
    }

    /// <summary>For tests: the quota flag of thread <paramref name="thread"/>.</summary>
    internal long SliceExpiredFlag(int thread) => Volatile.Read(ref _threads[thread].SliceExpired);

    /// <summary>One tick of the slice clock (or of a test, with made-up timestamps): raises the flag of each thread whose item has run
    /// since a tick at least one slice ago while work may wait ([SLICE-RAISE]). Returns whether any thread is awake.</summary>
    /// <param name="now">A Stopwatch timestamp (a test's own clock when driven by tests).</param>
    internal bool TickTimeSlice(long now)
    {
        bool anyAwake = false;
        foreach (SchedulerThread thread in _threads)
        {
            if (Volatile.Read(ref thread.Parked) != 0)
            {
                thread.SliceSeenCount = -1; // parked: no item runs; the next one starts a fresh count
                continue;
            }

            anyAwake = true;
            if (_timeSliceTicks == 0)
            {
                continue; // no quota (only tests tick such a scheduler)
            }

            long count = thread.DispatchCount;
            if (count != thread.SliceSeenCount)
            {
                thread.SliceSeenCount = count;
                thread.SliceSeenAt = now;
            }
            else if (count != 0 && now - thread.SliceSeenAt >= _timeSliceTicks && _queues.NonEmptyMask != 0)
            {
                Volatile.Write(ref thread.SliceExpired, count); // only while work may wait
            }
        }

        return anyAwake;
    }

    /// <summary>The slice clock, before it sleeps: makes the next checkpoint of any thread wake it ([SLICE-DORMANT]).</summary>
    internal void MarkSliceClockDormant()
    {
        foreach (SchedulerThread thread in _threads)
        {
            Interlocked.Exchange(ref thread.SliceExpired, SliceClockDormant);
        }
    }

    /// <summary>A checkpoint's look at the quota, on <paramref name="thread"/>: whether its item has used up its quota and its yield is
    /// what lets waiting work run ([SLICE-FLAG]).</summary>
    private protected bool QuotaUsedUp(SchedulerThread thread)
    {
        long expired = Volatile.Read(ref thread.SliceExpired);
        if (expired == 0)
        {
            return false;
        }

        if (expired == SliceClockDormant)
        {
            // The compare-exchange is the full fence [SLICE-DORMANT] needs before the clock's dormant flag is read.
            Interlocked.CompareExchange(ref thread.SliceExpired, 0, SliceClockDormant);
            SliceClock.Shared.OnCheckpointFoundDormant();
            return false;
        }

        if (expired == thread.DispatchCount && YieldFreesWaitingWork(thread))
        {
            return true; // the flag stays; the next item of this thread finds it stale and clears it
        }

        // Raised for an item that has ended, or nothing this yield would free: clear it, so the checkpoints that follow take the
        // fast path; the clock raises it again while the item runs on and work may wait.
        Interlocked.CompareExchange(ref thread.SliceExpired, 0, expired);
        return false;
    }

    /// <summary>Whether work waits that only a yield of <paramref name="thread"/>'s item lets run: on the loop, any waiting work; on a
    /// pool, work that no idle thread will take ([SLICE-FLAG]).</summary>
    private protected abstract bool YieldFreesWaitingWork(SchedulerThread thread);
}
