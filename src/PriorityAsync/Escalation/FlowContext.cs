using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The <see cref="SynchronizationContext"/> of one <see cref="WorkFlow"/> at one level ([X-FLOW]): what the flow's code posts here waits
/// in this context's own FIFO, and the scheduler's queue holds one place per item (<see cref="RunNextCallback"/>), at the flow's
/// effective level. A place runs the oldest item of the context, so a raise moves the waiting items up by queueing more places at the
/// new level: each item still runs exactly once, at the first of its places to come up ([X-MOVE]).
/// </summary>
/// <remarks>Invariant: the places queued for this context (not yet run or dropped) are at least as many as its items. A place that
/// finds no item is one a move left behind, and does nothing.</remarks>
internal class FlowContext : PrioritySynchronizationContext
{
    /// <summary>The queued place's callback; recognisable by reference, so a dropped place drops its context's oldest item instead.</summary>
    public static readonly SendOrPostCallback RunNextCallback = static state => ((FlowContext)state!).RunNext();

    // The items, oldest first, under _lock: the oldest in _first while the ring is empty (most flows hold at most one item at a time,
    // and then need no array), the rest in the ring. _first holds an item exactly when its callback is set.
    private SpinFlag _lock;
    private WorkItem _first;
    private WorkItem[]? _ring;
    private int _ringHead;
    private int _ringCount;

    /// <summary>A context of <paramref name="flow"/> at another level than its own.</summary>
    public FlowContext(WorkFlow flow, int level)
        : base(flow.Scheduler, level, flow)
    {
    }

    /// <summary>The flow's own context (the <see cref="WorkFlow"/> itself).</summary>
    private protected FlowContext(PriorityScheduler scheduler, int level)
        : base(scheduler, level)
    {
        Node = (WorkFlow)this;
    }

    /// <summary>The flow this context belongs to.</summary>
    public WorkFlow Flow => (WorkFlow)Node!;

    /// <summary>The items waiting (a moment's count).</summary>
    public int PendingCount
    {
        get
        {
            _lock.Enter();
            int count = (_first.Callback is null ? 0 : 1) + _ringCount;
            _lock.Exit();
            return count;
        }
    }

    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        QueueItem(new WorkItem(d, state, ExecutionContextFlow.Capture())); // a plain callback: the poster's context ([E-FLOW])
    }

    internal override void QueueContinuation(Action continuation, bool flowExecutionContext)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        QueueItem(new WorkItem(PriorityScheduler.s_runContinuation, continuation, flowExecutionContext ? ExecutionContextFlow.Capture() : null));
    }

    /// <summary>Adds <paramref name="item"/> to the flow's FIFO and queues its place at the flow's level now. The floor is read after the
    /// item is in ([X-MOVE]).</summary>
    internal override void QueueItem(in WorkItem item)
    {
        if (Flow.IsRegion)
        {
            Flow.LinkToHolder(); // [X-LOCK-FAST]: a raise of the holder after this must find the region, so link, then queue
        }

        Add(item);
        QueuePlace(EffectiveLevel);
    }

    private void Add(in WorkItem item)
    {
        _lock.Enter();
        try
        {
            if (_first.Callback is null && _ringCount == 0)
            {
                _first = item;
            }
            else
            {
                AppendToRing(item);
            }
        }
        finally
        {
            _lock.Exit();
        }
    }

    /// <summary>A due timer of the flow's (under the timer lock, on a thread of the running scheduler): its firing joins the flow's queue,
    /// and its place is queued as the timers queue their firings.</summary>
    internal void QueueTimerFiring(TimerEntry entry)
    {
        if (Flow.IsRegion)
        {
            Flow.LinkToHolderUnderLock(); // under the timer lock: linked, and recomputed if it mattered, when the timer was made
        }

        Add(new WorkItem(TimerEntry.FireCallback, entry));
        Scheduler.EnqueueFromTimers(EffectiveLevel, RunNextCallback, this);
    }

    /// <summary>A timer is made by code running here and will fire through this context: a region links to its holder now, outside the
    /// timer lock, so a raise before the firing is counted ([X-LOCK-FAST]).</summary>
    internal FlowContext LinkForTimer()
    {
        if (Flow.IsRegion)
        {
            Flow.LinkToHolder();
        }

        return this;
    }

    /// <summary>Queues one place for this context at <paramref name="level"/>: by <see cref="QueueItem"/>, and by a move ([X-MOVE]).</summary>
    internal void QueuePlace(int level) => Scheduler.Enqueue(level, RunNextCallback, this);

    /// <summary>A place of this context was dropped (the scheduler ended): its item, if any is left, is dropped in its stead ([D-DROP]).</summary>
    internal void DropNext(int level, DropReason reason)
    {
        if (TryTake(out WorkItem item))
        {
            Scheduler.DropItem(level, item, reason);
        }
    }

    /// <summary>Names the item the next place would run, for a trace; a place a move left behind runs nothing.</summary>
    internal string DescribeNext()
    {
        WorkItem item;
        _lock.Enter();
        try
        {
            if (_first.Callback is not null)
            {
                item = _first;
            }
            else if (_ringCount != 0)
            {
                item = _ring![_ringHead];
            }
            else
            {
                return $"{Flow.Describe()} (moved)";
            }
        }
        finally
        {
            _lock.Exit();
        }

        return CallbackNames.Describe(item.Callback, item.State);
    }

    private void RunNext()
    {
        if (!TryTake(out WorkItem item))
        {
            return; // a place a move left behind: its item ran at its new level ([X-MOVE])
        }

        // The dispatch made the level's own context current; the flow's code runs in the flow's, so its awaits come back here.
        SetSynchronizationContext(this);
        item.Invoke();
    }

    private bool TryTake(out WorkItem item)
    {
        _lock.Enter();
        try
        {
            if (_first.Callback is not null)
            {
                item = _first;
                _first = default;
                return true;
            }

            if (_ringCount != 0)
            {
                WorkItem[] ring = _ring!;
                item = ring[_ringHead];
                ring[_ringHead] = default;
                _ringHead = (_ringHead + 1) & (ring.Length - 1);
                _ringCount--;
                return true;
            }

            item = default;
            return false;
        }
        finally
        {
            _lock.Exit();
        }
    }

    /// <summary>Under the lock: appends behind <see cref="_first"/> (which moves into the ring first, keeping the order).</summary>
    private void AppendToRing(in WorkItem item)
    {
        bool hasFirst = _first.Callback is not null;
        int needed = _ringCount + (hasFirst ? 2 : 1);
        WorkItem[] ring = _ring ??= new WorkItem[4];
        if (needed > ring.Length)
        {
            var grown = new WorkItem[ring.Length * 2];
            for (int i = 0; i < _ringCount; i++)
            {
                grown[i] = ring[(_ringHead + i) & (ring.Length - 1)];
            }

            ring = _ring = grown;
            _ringHead = 0;
        }

        if (hasFirst)
        {
            _ringHead = (_ringHead - 1) & (ring.Length - 1); // the oldest goes in front of what the ring holds
            ring[_ringHead] = _first;
            _ringCount++;
            _first = default;
        }

        ring[(_ringHead + _ringCount) & (ring.Length - 1)] = item;
        _ringCount++;
    }
}
