using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// What the inspector's sampler keeps per scheduler while an inspector session listens: whether every item is observed, the item each
/// thread is running (when it was observed starting), and the sampler's own bookkeeping. Created by the sampler, or by the registry
/// for a scheduler that starts while a session listens; never while nobody inspects.
/// </summary>
/// <remarks>
/// <para>Each thread's slot has one writer, the thread itself, and is read by the sampler under a version count (a seqlock): the writer
/// makes the version odd, writes, makes it even; a reader that saw an odd or changed version gives up for this period. Only observed
/// items write it, so nothing here is on the fast path.</para>
/// <para>The sampler's fields are touched by the sampler thread alone.</para>
/// </remarks>
internal sealed class InspectorState
{
    private readonly Slot[] _slots;

    // Sampler thread only.
    private readonly long[] _seenCount;
    private readonly long[] _seenAt;
    private long _lastTotal = -1;
    private long _lastTick;
    private int _ticksToInfo;

    // Starts true: a scheduler is observed whole until its rate is known; the budget below bounds what that costs a busy one.
    private volatile bool _allItems = true;

    // Items observed in this period while every item is (the observed threads count, the sampler resets): past the period's budget
    // the scheduler falls back to one sample per period at once, without waiting for the sampler to measure its rate.
    private int _observedThisPeriod;
    private int _budget = int.MaxValue;

    public InspectorState(int id, int threads)
    {
        Id = id;
        _slots = new Slot[threads];
        _seenCount = new long[threads];
        _seenAt = new long[threads];
        for (int i = 0; i < threads; i++)
        {
            _seenCount[i] = -1;
        }
    }

    /// <summary>The scheduler's id in this process, as the events carry it.</summary>
    public int Id { get; }

    /// <summary>Whether every item is observed (a low item rate) or one per period (a high one). Written by the sampler.</summary>
    public bool AllItems
    {
        get => _allItems;
        set => _allItems = value;
    }

    public int Threads => _slots.Length;

    /// <summary>An observed item's thread, while every item is observed: counts it; false once the period's budget is spent.</summary>
    public bool CountObserved()
    {
        if (Interlocked.Increment(ref _observedThisPeriod) <= Volatile.Read(ref _budget))
        {
            return true;
        }

        _allItems = false;
        return false;
    }

    /// <summary>The observed item's own thread: it starts.</summary>
    public void Begin(int thread, int level, string method, long start)
    {
        if ((uint)thread >= (uint)_slots.Length)
        {
            return;
        }

        ref Slot slot = ref _slots[thread];
        Volatile.Write(ref slot.Version, slot.Version + 1);
        slot.Method = method;
        slot.Level = level;
        slot.Start = start;
        Volatile.Write(ref slot.Version, slot.Version + 1);
    }

    /// <summary>The observed item's own thread: it ended.</summary>
    public void End(int thread)
    {
        if ((uint)thread >= (uint)_slots.Length)
        {
            return;
        }

        ref Slot slot = ref _slots[thread];
        Volatile.Write(ref slot.Version, slot.Version + 1);
        slot.Method = null;
        Volatile.Write(ref slot.Version, slot.Version + 1);
    }

    /// <summary>Any thread: the item <paramref name="thread"/> runs now, if it was observed starting.</summary>
    public bool TryReadCurrent(int thread, out string method, out int level, out long start)
    {
        method = string.Empty;
        level = -1;
        start = 0;
        if ((uint)thread >= (uint)_slots.Length)
        {
            return false;
        }

        ref Slot slot = ref _slots[thread];
        int version = Volatile.Read(ref slot.Version);
        if ((version & 1) != 0)
        {
            return false;
        }

        string? current = slot.Method;
        int currentLevel = slot.Level;
        long currentStart = slot.Start;
        if (Volatile.Read(ref slot.Version) != version || current is null)
        {
            return false;
        }

        method = current;
        level = currentLevel;
        start = currentStart;
        return true;
    }

    /// <summary>Sampler thread: one period. Decides whether every item is observed from the scheduler's item rate (and updates its slow
    /// paths when that changes), writes the scheduler's state, and arms the period's one sample. Returns true when
    /// <see cref="AllItems"/> changed.</summary>
    public bool Tick(PriorityScheduler scheduler, PriorityEventSource log, int allItemsBelowPerSecond, int periodMilliseconds)
    {
        long now = scheduler.Timestamp();
        double frequency = scheduler.TimestampFrequency;
        bool changed = false;
        long total = 0;
        for (int level = 0; level < scheduler.Levels; level++)
        {
            total += scheduler.GetRun(level);
        }

        if (_lastTotal >= 0 && now > _lastTick)
        {
            double perSecond = (total - _lastTotal) / ((now - _lastTick) / frequency);

            // Hysteresis: every item at a low rate, one per period at a high one (docs/inspector.md, "Sampling").
            bool all = _allItems ? perSecond < allItemsBelowPerSecond : perSecond < allItemsBelowPerSecond / 2.0;
            if (all != _allItems)
            {
                _allItems = all;
                changed = true;
                ContextRegistry.Refresh(scheduler); // before this period's events say so: a reader that sees them sees the bits set
            }
        }

        _lastTotal = total;
        _lastTick = now;
        Volatile.Write(ref _budget, System.Math.Max(1, (int)((long)allItemsBelowPerSecond * periodMilliseconds / 1000)));
        Interlocked.Exchange(ref _observedThisPeriod, 0);

        if (--_ticksToInfo <= 0)
        {
            _ticksToInfo = System.Math.Max(1, 2000 / periodMilliseconds); // again every 2 s: a reader that missed it learns it soon
            log.SchedulerInfo(
                PriorityEventSource.SchemaVersion,
                Id,
                scheduler.Name,
                scheduler.Kind,
                scheduler.Levels,
                Threads,
                scheduler.Policy.ToString() ?? string.Empty,
                Milliseconds(scheduler.TimeSlice),
                Milliseconds(scheduler.StallTimeout),
                periodMilliseconds);
        }

        log.SchedulerState(Id, _allItems ? 1 : 0, scheduler.ArmedTimerCount);
        for (int level = 0; level < scheduler.Levels; level++)
        {
            log.LevelState(Id, level, scheduler.GetQueued(level), scheduler.GetRun(level), scheduler.GetRunning(level));
        }

        for (int thread = 0; thread < Threads; thread++)
        {
            WriteThreadState(scheduler, log, thread, now, frequency);
        }

        if (!_allItems)
        {
            scheduler.ArmInspectOne();
        }

        return changed;
    }

    /// <summary>Sampler thread: what <paramref name="thread"/> does now ([O-RUNNING]). An item the session saw start is named with its
    /// exact run time; any other running item (one that started before the session, or between two samples) from the thread's own
    /// record, with a lower bound of its run time: since this sampler, or the stall watchdog before it, first saw the thread on it.</summary>
    private void WriteThreadState(PriorityScheduler scheduler, PriorityEventSource log, int thread, long now, double frequency)
    {
        long dispatched = scheduler.ThreadDispatchCount(thread);
        if (dispatched != _seenCount[thread])
        {
            _seenCount[thread] = dispatched;
            _seenAt[thread] = now;
        }

        int state = 0;
        int level = -1;
        string method = string.Empty;
        double runningFor = 0;
        int exact = 0;
        if (TryReadCurrent(thread, out string observed, out int observedLevel, out long start))
        {
            state = 1;
            (method, level, exact) = (observed, observedLevel, 1);
            runningFor = (now - start) * 1000 / frequency;
        }
        else if (!scheduler.IsThreadParked(thread)
                 && scheduler.TryReadRunning(thread, out SendOrPostCallback callback, out object? itemState, out int recordedLevel, out long count))
        {
            state = 1;
            (method, level) = (CallbackNames.Describe(callback, itemState), recordedLevel);
            runningFor = count == _seenCount[thread] ? (now - _seenAt[thread]) * 1000 / frequency : 0;
            long watchdogSaw = scheduler.WatchdogSeenAt(thread, count);
            if (watchdogSaw != 0)
            {
                runningFor = System.Math.Max(runningFor, (System.Diagnostics.Stopwatch.GetTimestamp() - watchdogSaw) * 1000.0 / System.Diagnostics.Stopwatch.Frequency);
            }
        }

        if (state == 1 && scheduler.GetThread(thread) is { } osThread && (osThread.ThreadState & ThreadState.WaitSleepJoin) != 0)
        {
            state = 2; // blocked in a synchronous wait (Wait, Result, Sleep, a lock)
        }

        long stalledSince = state != 0 ? scheduler.StalledSince(thread) : 0;
        double stalledFor = stalledSince != 0 ? (System.Diagnostics.Stopwatch.GetTimestamp() - stalledSince) * 1000.0 / System.Diagnostics.Stopwatch.Frequency : -1;
        log.ThreadState(Id, thread, dispatched, state, level, method, System.Math.Max(0, runningFor), exact, stalledFor);
    }

    private static double Milliseconds(System.TimeSpan? value) => value is { } span ? span.TotalMilliseconds : -1;

    private struct Slot
    {
        public int Version;
        public int Level;
        public long Start;
        public string? Method;
    }
}
