using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Numerics;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// The set of per-level FIFO queues plus a bitmask of the levels that may hold work.
/// Any number of producers. One consumer at a time on every path but one: the single loop's thread, or the PriorityThreadPool thread
/// holding the dispatch lock. The exception is the pool's lock-free mode, whose threads all dequeue at once through
/// <see cref="TryDequeueHighestShared"/> (M1 below; D-N in ThreadPool/PriorityThreadPool.Engine.cs); the single-consumer members are
/// not called there while they dequeue.
/// </summary>
/// <remarks>
/// <para>
/// Invariant (I1): once <see cref="Enqueue"/> or <see cref="EnqueueFromConsumer"/> has returned for level L,
/// bit L of <see cref="NonEmptyMask"/> stays set until the consumer has taken every item of level L that was
/// enqueued before. A set bit over an empty queue is allowed (stale); a clear bit over a published item is not.
/// </para>
/// <para>
/// How I1 is kept: only the consumer clears bits, and only after a dequeue came back empty; it then looks at the
/// queue again (<see cref="TryDequeue"/>), so an item that a producer published between the empty dequeue and the
/// clear is seen. A producer on another thread issues a full fence after its enqueue and before it reads the mask
/// to decide whether to set the bit; the consumer's clear is an interlocked operation (a full fence) before its
/// second look. That is the store-buffer pattern with fences on both sides: either the producer sees the cleared bit
/// and sets it, or the consumer's second look sees the item.
/// </para>
/// <para>
/// Several consumers (M1, <see cref="TryDequeueHighestShared"/>, the pool's lock-free mode only). I1's argument holds with several
/// clearers: a producer either sees a cleared bit and sets it, or that clearer's second look sees the item; an item the second look saw
/// may be taken by another consumer first, which leaves a stale bit for the next dequeue to clear. But a clear opens a window: between
/// its And and its second look (and the Or that follows when the look finds an item), the bit is clear while the level may hold an item
/// whose enqueue has returned (its producer saw the bit still set and did not set it). A second consumer reading the mask in that window
/// would take a lower item while that one waits. The rule M1 keeps: <em>an item whose enqueue returned before a dequeue began is not
/// overtaken by it</em> (the dequeue takes an item of that level or a higher one). How: the shared clear counts itself in
/// <c>_clearsStarted</c> (an interlocked increment before the And) and <c>_clearsEnded</c> (after the second look and its Or); the
/// shared dequeue reads <c>_clearsEnded</c>, then the mask, then <c>_clearsStarted</c> (volatile reads, in that order). If the two
/// counts differ, a clear may have overlapped the mask read, and the levels above the chosen one are looked at (their queues, not their
/// bits); the highest that holds an item is taken instead. If they are equal, no clear overlapped: a clear whose window held the mask
/// read started before it (so the later read of <c>_clearsStarted</c> counts it) and ended after it (so the earlier read of
/// <c>_clearsEnded</c>, which would otherwise make the mask read see its Or, does not). So the common dequeue pays two more volatile
/// reads (plain loads on x64) and the clear two interlocked increments; the levels are looked at only when clears overlap, and the
/// single loop, which never calls the shared members, pays nothing. A dequeue that reads an empty mask takes nothing and overtakes
/// nothing; the clearing thread's second look finds the item and takes it (or another dequeue does).
/// </para>
/// <para>
/// FIFO: each level is one <see cref="ConcurrentQueue{T}"/>, which is linearizable, so items of one level come
/// out in the order their enqueues took effect (per producer, in program order). ConcurrentQueue reuses its ring
/// buffer segment in steady state, so enqueue and dequeue of a struct item allocate nothing.
/// </para>
/// <para>
/// Peeking (the aging policy reads each head's enqueue time): <see cref="ConcurrentQueue{T}.TryPeek"/> marks the head segment as
/// preserved for observation, which stops the queue from reusing it (measured: 63 B per item). So <see cref="TryPeek"/> instead moves
/// the head into a one-item slot per level, consumer only. The slot is the front of its level's queue: <see cref="TryDequeuePeekable"/>,
/// <see cref="TryDrain"/>, <see cref="Count"/>, <see cref="Snapshot"/> and the emptiness checks behind I1 all look at it first. Only
/// the aging policy peeks; strict priority never fills the slot and its <see cref="TryDequeue"/> does not look at it.
/// </para>
/// </remarks>
internal sealed class LevelQueues
{
    private readonly ConcurrentQueue<WorkItem>[] _queues;

    // Bit L set: level L may be non-empty (I1). Written by producers (Or) and the consumer (And).
    private long _nonEmptyMask;

    // M1: the shared clears begun and ended (the pool's lock-free mode only; the single loop never writes them).
    private long _clearsStarted;
    private long _clearsEnded;

    // The peek slot of each level (see "Peeking"): _peeked[L] holds the front item of level L while _hasPeeked[L] is 1. Filled and
    // emptied by the consumer; after the loop finished, TryDrain empties it from any thread (an interlocked exchange of the flag hands
    // the item to exactly one drainer).
    private readonly WorkItem[] _peeked;
    private readonly int[] _hasPeeked;

    public LevelQueues(int levels)
    {
        Debug.Assert(levels is >= 1 and <= 64);
        _queues = new ConcurrentQueue<WorkItem>[levels];
        _peeked = new WorkItem[levels];
        _hasPeeked = new int[levels];
        for (int i = 0; i < levels; i++)
        {
            _queues[i] = new ConcurrentQueue<WorkItem>();
        }
    }

    public int Levels => _queues.Length;

    /// <summary>The levels that may hold work; bit L is level L.</summary>
    public ulong NonEmptyMask => (ulong)Volatile.Read(ref _nonEmptyMask);

    /// <summary>
    /// Consumer only: whether a level strictly above <paramref name="level"/> holds work. Unlike the mask alone, it is not fooled by a
    /// stale bit (the bit of a level whose last item is the one running now stays set until the next dequeue finds it empty).
    /// </summary>
    public bool HasWorkAbove(int level)
    {
        // Fast path: no bit above. Two shifts, so that level 63 gives 0 rather than mask >> 0.
        return (NonEmptyMask >> level >> 1) != 0 && HasWorkAboveSlow(level);
    }

    private bool HasWorkAboveSlow(int level)
    {
        ulong above = NonEmptyMask & (~0UL << level << 1);
        while (above != 0)
        {
            int candidate = HighestLevel(above);

            // A set bit over an empty queue is stale (the running item's own level keeps its bit until the next dequeue).
            if (!IsEmpty(candidate) || !TryClearBit(candidate))
            {
                return true;
            }

            above &= ~(1UL << candidate);
        }

        return false;
    }

    /// <summary>
    /// Consumer only: whether any level holds work. A set bit over an empty queue (stale) is cleared on the way, as
    /// <see cref="HasWorkAbove"/> does, so that a later look at the mask alone is not fooled by it either.
    /// </summary>
    public bool HasWaitingWork()
    {
        ulong mask = NonEmptyMask;
        while (mask != 0)
        {
            int level = HighestLevel(mask);
            if (!IsEmpty(level) || !TryClearBit(level))
            {
                return true;
            }

            mask &= ~(1UL << level);
        }

        return false;
    }

    /// <summary>Enqueues from any thread other than the consumer.</summary>
    public void Enqueue(int level, in WorkItem item)
    {
        _queues[level].Enqueue(item);
        long bit = 1L << level;

        // Full fence between publishing the item and reading the mask (see I1), and, for the caller, between
        // publishing the item and reading the loop's parked flag (the wake-up protocol in PriorityContext).
        Interlocked.MemoryBarrier();
        if ((Volatile.Read(ref _nonEmptyMask) & bit) == 0)
        {
            Interlocked.Or(ref _nonEmptyMask, bit);
        }
    }

    /// <summary>Enqueues from the consumer thread itself: no fence is needed, because only this thread clears bits.</summary>
    public void EnqueueFromConsumer(int level, in WorkItem item)
    {
        _queues[level].Enqueue(item);
        long bit = 1L << level;
        if ((Volatile.Read(ref _nonEmptyMask) & bit) == 0)
        {
            Interlocked.Or(ref _nonEmptyMask, bit);
        }
    }

    /// <summary>Consumer only: takes the oldest item of <paramref name="level"/>, keeping I1.</summary>
    public bool TryDequeue(int level, out WorkItem item)
    {
        ConcurrentQueue<WorkItem> queue = _queues[level];
        if (queue.TryDequeue(out item))
        {
            return true;
        }

        // Empty: clear the bit, unless an item was published meanwhile; then take it (the only consumer, so it is still there;
        // TryDequeueShared is the several-consumer form).
        return !TryClearBit(level) && queue.TryDequeue(out item);
    }

    /// <summary>
    /// Several consumers at once (M1; the pool's lock-free mode): the oldest item of the highest level that holds one. An item whose
    /// enqueue returned before this call began is not overtaken: the item taken is of its level or a higher one.
    /// </summary>
    public bool TryDequeueHighestShared(out WorkItem item, out int level)
    {
        while (true)
        {
            // M1: the ended count, then the mask, then the started count; volatile reads keep that order.
            long ended = Volatile.Read(ref _clearsEnded);
            ulong mask = NonEmptyMask;
            if (mask == 0)
            {
                item = default;
                level = -1;
                return false;
            }

            level = HighestLevel(mask);
            if (Volatile.Read(ref _clearsStarted) != ended)
            {
                level = HighestHoldingFrom(level); // a clear may have overlapped the mask read: a bit above may be clear over an item
            }

            if (TryDequeueShared(level, out item))
            {
                return true;
            }

            // Empty (the bit was stale and is cleared now, or another consumer took the item): look again. Lock-free: a round fails
            // only when another consumer took an item or a stale bit was cleared.
        }
    }

    /// <summary>M1: the highest level above <paramref name="level"/> whose queue holds an item, else <paramref name="level"/>.</summary>
    private int HighestHoldingFrom(int level)
    {
        for (int above = Levels - 1; above > level; above--)
        {
            if (!IsEmpty(above))
            {
                return above;
            }
        }

        return level;
    }

    /// <summary><see cref="TryDequeue"/> with several consumers (M1): the clear is counted, and an item its second look saw may have
    /// been taken by another consumer by the time this one dequeues (then false, with the bit set: stale).</summary>
    private bool TryDequeueShared(int level, out WorkItem item)
    {
        ConcurrentQueue<WorkItem> queue = _queues[level];
        if (queue.TryDequeue(out item))
        {
            return true;
        }

        Interlocked.Increment(ref _clearsStarted); // a full fence before the clear's And (M1)
        bool cleared = TryClearBit(level);
        Interlocked.Increment(ref _clearsEnded); // after the second look and its Or
        return !cleared && queue.TryDequeue(out item);
    }

    /// <summary>For tests only: runs <paramref name="during"/> inside the window of a shared clear of <paramref name="level"/> (M1), as
    /// if another consumer were between its And and its second look: the bit is clear and the clear is counted as begun.</summary>
    internal void InSharedClearWindowForTests(int level, Action during)
    {
        Interlocked.Increment(ref _clearsStarted);
        long bit = 1L << level;
        Interlocked.And(ref _nonEmptyMask, ~bit);
        try
        {
            during();
        }
        finally
        {
            if (!IsEmpty(level))
            {
                Interlocked.Or(ref _nonEmptyMask, bit); // the second look, as TryClearBit's
            }

            Interlocked.Increment(ref _clearsEnded);
        }
    }

    /// <summary>Consumer only: the oldest item of <paramref name="level"/> without taking it: it moves to the level's peek slot, and the
    /// next <see cref="TryDequeuePeekable"/> of that level returns it. Used by the aging policy to read the head's enqueue time.</summary>
    public bool TryPeek(int level, out WorkItem item)
    {
        if (_hasPeeked[level] != 0)
        {
            item = _peeked[level];
            return true;
        }

        if (!_queues[level].TryDequeue(out item))
        {
            return false;
        }

        _peeked[level] = item;
        Volatile.Write(ref _hasPeeked[level], 1); // after the item: a drainer that sees the flag sees the item
        return true;
    }

    /// <summary>Consumer only: <see cref="TryDequeue"/> for a policy that peeks: the peek slot first.</summary>
    public bool TryDequeuePeekable(int level, out WorkItem item)
    {
        if (_hasPeeked[level] != 0)
        {
            item = _peeked[level];
            _peeked[level] = default; // let the state be collected
            Volatile.Write(ref _hasPeeked[level], 0);
            return true;
        }

        return TryDequeue(level, out item);
    }

    /// <summary>Whether <paramref name="level"/> holds no item, counting the peek slot (a moment's snapshot).</summary>
    public bool IsEmpty(int level) => Volatile.Read(ref _hasPeeked[level]) == 0 && _queues[level].IsEmpty;

    /// <summary>
    /// Consumer only, for a level that looked empty: clears its bit and returns <see langword="true"/>, or, if an item turns out to be
    /// there after all, leaves the bit set and returns <see langword="false"/>. This is the one place a bit is cleared (I1): the clear
    /// is a full fence, then the queue is looked at again, because a producer may have published an item after our first look and
    /// skipped setting the bit since it was still set.
    /// </summary>
    private bool TryClearBit(int level)
    {
        long bit = 1L << level;
        Interlocked.And(ref _nonEmptyMask, ~bit);
        if (IsEmpty(level))
        {
            return true;
        }

        Interlocked.Or(ref _nonEmptyMask, bit);
        return false;
    }

    /// <summary>Any thread: takes any item of <paramref name="level"/>; used only when draining a finished context.</summary>
    public bool TryDrain(int level, out WorkItem item)
    {
        if (Volatile.Read(ref _hasPeeked[level]) != 0 && Interlocked.Exchange(ref _hasPeeked[level], 0) != 0)
        {
            item = _peeked[level];
            return true;
        }

        return _queues[level].TryDequeue(out item);
    }

    /// <summary>At the end of a context or pool (its last thread, or a poster that raced the end): hands every item left to
    /// <paramref name="dropper"/>, highest level first. A throwing drop (a WorkDropped handler) does not stop the drain: every item is
    /// dropped, and the first failure is returned for the caller to rethrow after.</summary>
    public ExceptionDispatchInfo? DrainAll(PriorityScheduler dropper, DropReason reason)
    {
        ExceptionDispatchInfo? firstHandlerFailure = null;
        for (int level = Levels - 1; level >= 0; level--)
        {
            while (TryDrain(level, out WorkItem item))
            {
                try
                {
                    dropper.Drop(level, item, reason);
                }
                catch (Exception ex)
                {
                    firstHandlerFailure ??= ExceptionDispatchInfo.Capture(ex);
                }
            }
        }

        return firstHandlerFailure;
    }

    /// <summary>Number of items waiting at <paramref name="level"/> (a moment's snapshot).</summary>
    public int Count(int level) => _queues[level].Count + Volatile.Read(ref _hasPeeked[level]);

    /// <summary>A moment's copy of one level's queue, oldest first (for debuggers).</summary>
    public WorkItem[] Snapshot(int level)
    {
        WorkItem[] queued = _queues[level].ToArray();
        if (Volatile.Read(ref _hasPeeked[level]) == 0)
        {
            return queued;
        }

        var all = new WorkItem[queued.Length + 1];
        all[0] = _peeked[level];
        queued.CopyTo(all, 1);
        return all;
    }

    /// <summary>For debuggers (both schedulers' <c>TaskScheduler.GetScheduledTasks</c>): the tasks queued at <paramref name="level"/>
    /// with <paramref name="executeTask"/> (the one callback of that level's task scheduler), oldest first, from a moment's copy.</summary>
    public IEnumerable<Task> ScheduledTasks(int level, SendOrPostCallback executeTask)
    {
        foreach (WorkItem item in Snapshot(level))
        {
            if (item.Callback == executeTask && item.State is Task task)
            {
                yield return task;
            }
        }
    }

    /// <summary>The highest level whose bit is set, or -1.</summary>
    public static int HighestLevel(ulong mask) => 63 - BitOperations.LeadingZeroCount(mask);
}
