using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// One thread that runs a scheduler's items: the loop of a <see cref="PriorityContext"/>, or one of a <see cref="PriorityThreadPool"/>'s
/// threads. It holds what is per consumer: the park event and flag, the dispatch counters the watchdog, the time quota and the
/// snapshot read, the quota flag, the record of the item it runs ([O-RUNNING]), and (on a pool) the idle-stack mark and the slot its
/// running code holds.
/// </summary>
internal sealed class SchedulerThread
{
    [ThreadStatic]
    private static SchedulerThread? t_current;

    // [Pad + L]: the items started at level L. One writer, so no interlocked add; Pad longs (64 bytes) on each side, so that no other
    // thread's per-item writes share a cache line with them.
    private const int Pad = 8;
    private readonly long[] _counters;

    public SchedulerThread(PriorityScheduler scheduler, int index)
    {
        Scheduler = scheduler;
        Index = index;
        _counters = new long[Pad + scheduler.Levels + Pad];
    }

    /// <summary>The scheduler thread running on the calling thread, or null.</summary>
    public static SchedulerThread? Current => t_current;

    public PriorityScheduler Scheduler { get; }

    public int Index { get; }

    /// <summary>The thread last bound (<see cref="Bind"/>): the loop's, a host's, or a pool thread's. Kept after it unbinds, so that a
    /// handler raised there as the scheduler ends is still told it runs on one of the scheduler's threads.</summary>
    public Thread? Thread { get; private set; }

    /// <summary>Signalled to wake the thread when it parks ([P-LOOP], [P-POOL]).</summary>
    public ManualResetEventSlim Event { get; } = new(false, spinCount: 0);

    /// <summary>1 while the thread is parked or about to park.</summary>
    public int Parked;

    /// <summary>The watchdog thread that watches this thread, set as its watchdog registers, or null (no stall watchdog): told as
    /// the thread leaves its park, in case it sleeps because every thread it watches was idle ([O-STALL]).</summary>
    public WatchdogThread? Watcher;

    /// <summary>The time quota's flag ([SLICE-FLAG]): 0, the dispatch count of the item that has used up its quota, or
    /// <see cref="PriorityScheduler.SliceClockDormant"/>. Written by the slice clock, cleared by this thread's checkpoints.</summary>
    public long SliceExpired;

    /// <summary>The slice clock's own: the dispatch count it saw, and since when.</summary>
    public long SliceSeenCount = -1;

    /// <summary>See <see cref="SliceSeenCount"/>.</summary>
    public long SliceSeenAt;

    /// <summary>The item this thread runs now ([O-RUNNING]): its callback, written by this thread before each item (with
    /// <see cref="RunningState"/> and <see cref="RunningLevel"/>), read by the sampler and the stall report on other threads, cleared
    /// when the thread goes idle. Null: no item (idle, or a host's thread outside its drain).</summary>
    public SendOrPostCallback? RunningCallback;

    /// <summary>See <see cref="RunningCallback"/>.</summary>
    public object? RunningState;

    /// <summary>See <see cref="RunningCallback"/>: the running item's level.</summary>
    public int RunningLevel = -1;

    /// <summary>This thread only: when the last observed item ended, and the dispatch count then (0: no usable end).</summary>
    public long LastItemEnd;

    /// <summary>See <see cref="LastItemEnd"/>.</summary>
    public long LastItemSequence;

    /// <summary>Pool, under the idle lock: whether this thread is in the idle stack.</summary>
    public bool InIdleStack { get; set; }

    /// <summary>Pool, this thread only: the level of the slot the running code holds ([K-SLOTS]), or -1.</summary>
    public int AccountedLevel { get; set; } = -1;

    /// <summary>Pool, this thread only: the running code is nested in the thread's item and holds no slot of its own ([K-SLOTS]).</summary>
    public bool OnOuterSlot { get; set; }

    /// <summary>Pool, this thread only: when the running item started, for the weighted-shares charge.</summary>
    public long ItemStart { get; set; }

    /// <summary>The counters, for a dispatch path that keeps them in a local.</summary>
    public long[] Counters => _counters;

    /// <summary>One more item started at <paramref name="level"/>: the only write a dispatch makes for the watchdog, the quota and
    /// the snapshot.</summary>
    public static void CountDispatch(long[] counters, int level) =>
        Volatile.Write(ref counters[Pad + level], counters[Pad + level] + 1);

    /// <summary>This thread, before it runs <paramref name="item"/> ([O-RUNNING]): no clock, and each field is written only when it
    /// changes: a reference write to this long-lived object pays the GC's write barrier, and any write takes the object's cache line
    /// from the producers that read <see cref="Parked"/> on every post; items in a row often share their level and callback, and an
    /// async method's continuations their state.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void RecordRunning(in WorkItem item, int level)
    {
        if (!ReferenceEquals(RunningCallback, item.Callback))
        {
            RunningCallback = item.Callback;
        }

        if (!ReferenceEquals(RunningState, item.State))
        {
            RunningState = item.State;
        }

        if (RunningLevel != level)
        {
            RunningLevel = level;
        }
    }

    /// <summary>This thread, as it goes idle (parks, or a host's drain returns): it runs nothing, and keeps nothing alive.</summary>
    public void ClearRunning()
    {
        RunningCallback = null;
        RunningState = null;
        RunningLevel = -1;
    }

    /// <summary>Any thread: the item this thread runs, read twice around the dispatch count so that a thread that moved on meanwhile
    /// is not read as a mix of two items. False when the thread runs nothing, or moved on while read ([O-RUNNING]).</summary>
    public bool TryReadRunning(out SendOrPostCallback callback, out object? state, out int level, out long dispatched)
    {
        dispatched = DispatchCount;
        SendOrPostCallback? first = Volatile.Read(ref RunningCallback);
        state = Volatile.Read(ref RunningState);
        level = Volatile.Read(ref RunningLevel);
        callback = first!;
        return first is not null
            && level >= 0
            && ReferenceEquals(Volatile.Read(ref RunningCallback), first)
            && ReferenceEquals(Volatile.Read(ref RunningState), state)
            && DispatchCount == dispatched;
    }

    /// <summary>Any thread: the items this thread has started at <paramref name="level"/>.</summary>
    public long RunCount(int level) => Volatile.Read(ref _counters[Pad + level]);

    /// <summary>Any thread: the items this thread has started. Each counter only grows, so a sum read between two moments lies
    /// between the sums at those moments ([SLICE-RAISE]).</summary>
    public long DispatchCount
    {
        get
        {
            long total = 0;
            for (int level = Pad; level < _counters.Length - Pad; level++)
            {
                total += Volatile.Read(ref _counters[level]);
            }

            return total;
        }
    }

    /// <summary>The calling thread runs this scheduler thread's items from now on.</summary>
    public void Bind()
    {
        Thread = System.Threading.Thread.CurrentThread;
        t_current = this;
    }

    public static void Unbind() => t_current = null;

    /// <summary>The watchdog: items waiting that this thread would run; none while it is parked (an idle thread is not stalled).</summary>
    public int PendingCount(int level) => Volatile.Read(ref Parked) != 0 ? 0 : Scheduler.Queues.Count(level);

    /// <summary>The watchdog: the level of an overdue loop timer this thread should have fired, or -1.</summary>
    public int OverdueTimerLevel() => Volatile.Read(ref Parked) != 0 ? -1 : Scheduler.OverdueTimerLevel();

    public override string ToString() => $"{Scheduler.Name} #{Index}";
}
