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
/// The per-level FIFO queues of a scheduler plus a bitmask of the levels that may hold work ([Q-MASK]). Any number
/// of producers; one consumer at a time (the loop's thread, or the pool thread holding the dispatch lock), except in the pool's
/// lock-free mode, whose threads all dequeue at once through <see cref="TryDequeueHighestShared"/> ([M-SHARED]) and call no
/// single-consumer member.
/// </summary>
/// <remarks>Each level is one linearizable <see cref="ConcurrentQueue{T}"/> of struct items, so queueing allocates nothing in steady
/// state and each level is FIFO per producer. The aging policy peeks through a one-item slot per level ([Q-PEEK]).</remarks>
internal sealed class LevelQueues
{
    private readonly ConcurrentQueue<WorkItem>[] _queues;

    // Bit L set: level L may be non-empty ([Q-MASK]). Written by producers (Or) and the consumer (And).
    private long _nonEmptyMask;

    // [M-SHARED]: the shared clears begun and ended (the pool's lock-free mode only).
    private long _clearsStarted;
    private long _clearsEnded;

    // [Q-PEEK]: _peeked[L] is the front item of level L while _hasPeeked[L] is 1.
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

        // [Q-MASK]: a full fence between publishing the item and reading the mask (and, for the caller, the state and the parked flags).
        Interlocked.MemoryBarrier();
        if ((Volatile.Read(ref _nonEmptyMask) & bit) == 0)
        {
            Interlocked.Or(ref _nonEmptyMask, bit);
        }
    }

    /// <summary>Enqueues from the consumer thread itself: no fence, because only this thread clears bits ([Q-CONSUMER]).</summary>
    public void EnqueueFromConsumer(int level, in WorkItem item)
    {
        _queues[level].Enqueue(item);
        long bit = 1L << level;
        if ((Volatile.Read(ref _nonEmptyMask) & bit) == 0)
        {
            Interlocked.Or(ref _nonEmptyMask, bit);
        }
    }

    /// <summary>Consumer only: takes the oldest item of <paramref name="level"/>, keeping [Q-MASK].</summary>
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
    /// Several consumers at once ([M-SHARED]; the pool's lock-free mode): the oldest item of the highest level that holds one. An item whose
    /// enqueue returned before this call began is not overtaken: the item taken is of its level or a higher one.
    /// </summary>
    public bool TryDequeueHighestShared(out WorkItem item, out int level)
    {
        while (true)
        {
            // [M-SHARED]: the ended count, then the mask, then the started count; volatile reads keep that order.
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

    /// <summary>[M-SHARED]: the highest level above <paramref name="level"/> whose queue holds an item, else <paramref name="level"/>.</summary>
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

    /// <summary><see cref="TryDequeue"/> with several consumers ([M-SHARED]): the clear is counted, and an item its second look saw may have
    /// been taken by another consumer by the time this one dequeues (then false, with the bit set: stale).</summary>
    private bool TryDequeueShared(int level, out WorkItem item)
    {
        ConcurrentQueue<WorkItem> queue = _queues[level];
        if (queue.TryDequeue(out item))
        {
            return true;
        }

        Interlocked.Increment(ref _clearsStarted); // a full fence before the clear's And ([M-SHARED])
        bool cleared = TryClearBit(level);
        Interlocked.Increment(ref _clearsEnded); // after the second look and its Or
        return !cleared && queue.TryDequeue(out item);
    }

    /// <summary>For tests only: runs <paramref name="during"/> inside the window of a shared clear of <paramref name="level"/> ([M-SHARED]), as
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
    /// next <see cref="TryDequeuePeekable"/> of that level returns it ([Q-PEEK]).</summary>
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
    /// there after all, leaves the bit set and returns <see langword="false"/>. The one place a bit is cleared ([Q-MASK]): a full
    /// fence, then a second look, for an item a producer published after our first look without setting the still-set bit.
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

    /// <summary>Any thread: takes any item of <paramref name="level"/>; used only when draining a finished scheduler ([D-DROP]).</summary>
    public bool TryDrain(int level, out WorkItem item)
    {
        if (Volatile.Read(ref _hasPeeked[level]) != 0 && Interlocked.Exchange(ref _hasPeeked[level], 0) != 0)
        {
            item = _peeked[level];
            return true;
        }

        return _queues[level].TryDequeue(out item);
    }

    /// <summary>At the end of a scheduler (its last thread, or a poster that raced the end, [E-RACE]): hands every item left to
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
