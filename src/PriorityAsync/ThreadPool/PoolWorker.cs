using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// One thread of a <see cref="PriorityThreadPool"/>: its park event, its place in the idle stack, the level its running item is
/// accounted at (for the concurrency caps), and its own dispatch count, which its watchdog reads (each thread is watched on its own).
/// </summary>
internal sealed class PoolWorker : IWatchdogTarget
{
    [ThreadStatic]
    private static PoolWorker? t_current;

    public PoolWorker(PriorityThreadPool pool, int index)
    {
        Pool = pool;
        Index = index;
        _counters = new long[Pad + 1 + pool.Levels + Pad];
    }

    /// <summary>The worker running on the calling thread, or null (not a pool thread).</summary>
    public static PoolWorker? Current => t_current;

    public PriorityThreadPool Pool { get; }

    public int Index { get; }

    /// <summary>The thread this worker runs on, set before it starts: the pool recognises its own threads by it, also after
    /// <see cref="Unbind"/> (PriorityThreadPool.IsOwnThread).</summary>
    public Thread? Thread { get; set; }

    /// <summary>Signalled by the producer that pops this worker from the idle stack (P1 in PriorityThreadPool.Engine.cs).</summary>
    public ManualResetEventSlim Event { get; } = new(false, spinCount: 0);

    /// <summary>Under the pool's idle lock: whether this worker is in the idle stack.</summary>
    public bool InIdleStack { get; set; }

    /// <summary>This thread only (read by its watchdog and the running gauge): the level of the slot the running code holds (its item's
    /// dequeue level, moved by an inline Prioritize; a nested run's while it runs: K-N in PriorityThreadPool.Engine.cs), or -1 once the
    /// thread has found no more work (in locked mode: until its next take, which ends the previous item's accounting).</summary>
    public int AccountedLevel { get; set; } = -1;

    /// <summary>This thread only (K-N): true while the code running is nested in the thread's item (an inlined task, an inline
    /// <c>Send</c>) and holds no slot of its own: it runs on the slot <see cref="AccountedLevel"/> names, which belongs to the code it is
    /// nested in. An inline <c>Prioritize</c> then takes a slot at its new level instead of moving that one.</summary>
    public bool OnOuterSlot { get; set; }

    /// <summary>This thread only: when the running item started, for the weighted-shares charge.</summary>
    public long ItemStart { get; set; }

    /// <summary>1 while the thread is parked or about to park (its watchdog then sees no waiting work: an idle thread is not stalled).</summary>
    public int Parked;

    /// <summary>The time quota's flag of this thread (C1-N in Checkpoints/PriorityThreadPool.Checkpoint.cs): 0, the dispatch count of
    /// the item that has used up its quota, or <see cref="PriorityContext.SliceClockDormant"/>. Written by the slice clock, cleared by
    /// this thread's checkpoints.</summary>
    public long SliceExpired;

    /// <summary>The slice clock's own (one thread at a time: the clock, or a test driving the ticks): the count it saw, and since when.</summary>
    public long SliceSeenCount = -1;

    /// <summary>See <see cref="SliceSeenCount"/>.</summary>
    public long SliceSeenAt;

    // This thread's per-item counters, written on every item: [Pad] the dispatch count (the watchdog's), [Pad + 1 + L] the items
    // started at level L (the snapshot sums them over the threads). One writer, so no interlocked add; and Pad longs (64 bytes) on
    // each side, so that no other thread's per-item writes share a cache line with them (the workers and their arrays are allocated
    // one after the other, so without the padding two threads' counters could share a line).
    private const int Pad = 8;
    private readonly long[] _counters;

    /// <summary>This thread only: one more item started at <paramref name="level"/> (the watchdog's count and the snapshot's).</summary>
    public void CountDispatch(int level)
    {
        long[] counters = _counters;
        Volatile.Write(ref counters[Pad], counters[Pad] + 1);
        Volatile.Write(ref counters[Pad + 1 + level], counters[Pad + 1 + level] + 1);
    }

    /// <summary>Any thread: how many items this thread has started at <paramref name="level"/> (a moment's value).</summary>
    public long RunCount(int level) => Volatile.Read(ref _counters[Pad + 1 + level]);

    /// <summary>Items this thread has dequeued; goes up after each dequeue, before the item runs. Any thread.</summary>
    public long DispatchCount => Volatile.Read(ref _counters[Pad]);

    public void Bind() => t_current = this;

    public static void Unbind() => t_current = null;

    bool IWatchdogTarget.IsFinished => Pool.IsFinished;

    int IWatchdogTarget.Levels => Pool.Levels;

    long IWatchdogTarget.DispatchCount => DispatchCount;

    int IWatchdogTarget.PendingCount(int level) => Volatile.Read(ref Parked) != 0 ? 0 : Pool.Queues.Count(level);

    int IWatchdogTarget.OverdueTimerLevel() => Volatile.Read(ref Parked) != 0 ? -1 : Pool.OverdueTimerLevel();

    void IWatchdogTarget.OnStallDetected(StallDetectedEventArgs report) => Pool.OnStallDetected(this, report);

    public override string ToString() => $"{Pool.Name} #{Index}";
}
