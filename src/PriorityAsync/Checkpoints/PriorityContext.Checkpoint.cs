using System;
using System.Runtime.CompilerServices;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// Checkpoints and the time quota: Checkpoint(), ShouldYield, and the flag the slice clock raises.
//
// Protocol (C1). _sliceExpired holds 0, or the dispatch count of an item the slice clock saw running for a whole TimeSlice. The loop's
// dispatch count (DispatchCount, the sum of _runPerLevel) goes up by one as each item starts, so while item K runs it is K, and a
// value of _sliceExpired is only believed while DispatchCount equals it: the same item is still running. The slice clock writes it
// (TickTimeSlice); a checkpoint that finds a value for an item that has ended clears it with a compare-exchange, which cannot undo a
// newer raise. So the loop does nothing per item for the quota: no write, no clock read; a checkpoint reads one more field.
//
// Why the clock's raise is right (C2): the clock remembers the first tick at which it saw count K with the loop not parked
// (_sliceSeenAt). Count K at that tick means item K had started (the count goes up before the item runs). If a checkpoint later sees
// DispatchCount == K, item K is still running, so it has run at least (now - _sliceSeenAt) >= TimeSlice. The counters are read one
// by one from another thread, but each only grows, so a sum read between two moments lies between the counts at those moments: two
// equal sums at two ticks mean no item started in between. A tick every quarter slice raises the flag at most a quarter slice plus a
// tick late: between 1 and about 1.5 slices into the item.
public sealed partial class PriorityContext
{
    // Stopwatch ticks of the quota; 0: no quota. Copied from the options.
    private readonly long _timeSliceTicks;
    private readonly bool _timeSliceWatched;

    // The thread running the loop, while it runs (null before and after): Thread.CurrentThread is compared with it, because the JIT
    // reuses the thread-local base it already loaded for SynchronizationContext.Current; a second [ThreadStatic] costs one more call.
    private Thread? _loopThread;

    // C1: 0, or the dispatch count of the item that has used up its quota. Written by the slice clock, cleared by checkpoints.
    private long _sliceExpired;

    // The slice clock's own (one thread at a time: the clock, or a test driving TickTimeSlice): the count seen, and since when.
    private long _sliceSeenCount = -1;
    private long _sliceSeenAt;

    /// <summary>
    /// Gets whether the calling code, running in this context, should yield now: work waits at a level above its own, or the running item
    /// has used up its time quota (<see cref="PriorityContextOptions.TimeSlice"/>) and other work is waiting. Exactly when
    /// <see cref="Checkpoint"/> would not complete at once. Costs a few field reads, no clock read.
    /// </summary>
    /// <exception cref="InvalidOperationException">The caller is not running inside this context.</exception>
    public bool ShouldYield
    {
        get
        {
            PrioritySynchronizationContext current = CurrentLevelContextOf(this, nameof(ShouldYield));
            return ShouldYieldAt(current.Level);
        }
    }

    /// <summary>The slice clock's period for this context: a quarter of the slice, at least 1 ms.</summary>
    internal int TimeSliceTickMilliseconds { get; }

    /// <summary>For tests: the value of the quota flag (C1).</summary>
    internal long SliceExpiredFlag => Volatile.Read(ref _sliceExpired);

    /// <summary>
    /// Lets more urgent work run, at a cheap point of a long computation: completes at once (without queueing or allocating) unless work
    /// waits at a level above the caller's, or the running item has used up its time quota (<see cref="PriorityContextOptions.TimeSlice"/>)
    /// and other work is waiting; then the rest of the method is queued at the back of its level. The caller's level does not change.
    /// </summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside this context.</exception>
    public CheckpointAwaitable Checkpoint() => new(CurrentLevelContextOf(this, nameof(Checkpoint)));

    /// <summary>The checkpoint decision at <paramref name="level"/>: whether the caller must queue the rest of its method.</summary>
    /// <remarks>The fast path is the thread check and three field reads: the timers flag, the quota flag, the mask of levels above.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool ShouldYieldAt(int level) =>
        (Thread.CurrentThread != _loopThread
         || Volatile.Read(ref _timersDue) != 0
         || Volatile.Read(ref _sliceExpired) != 0
         || (_queues.NonEmptyMask >> level >> 1) != 0)
        && ShouldYieldSlow(level);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool ShouldYieldSlow(int level)
    {
        if (Thread.CurrentThread != _loopThread)
        {
            // Not on this loop's thread (the level's SynchronizationContext was installed elsewhere): hop onto the loop, as Prioritize
            // does. A finished context completes at once, and the awaiter's GetResult throws.
            return !IsFinished;
        }

        if (Volatile.Read(ref _timersDue) != 0)
        {
            FireDueTimers(); // a due timer above the caller's level runs first (see "Timers")
        }

        if (_queues.HasWorkAbove(level))
        {
            return true;
        }

        long expired = Volatile.Read(ref _sliceExpired);
        if (expired == 0)
        {
            return false;
        }

        if (expired != DispatchCount)
        {
            Interlocked.CompareExchange(ref _sliceExpired, 0, expired); // raised for an item that has ended (C1)
            return false;
        }

        return HasWaitingWork();
    }

    /// <summary>
    /// One tick of the slice clock (or of a test, with made-up timestamps): raises the quota flag when the same item has been running
    /// since a tick at least one slice ago (C2). Returns whether the loop is awake (not parked).
    /// </summary>
    /// <param name="now">A <see cref="System.Diagnostics.Stopwatch.GetTimestamp"/> value (a test's own clock when driven by tests).</param>
    internal bool TickTimeSlice(long now)
    {
        if (IsParked)
        {
            _sliceSeenCount = -1; // parked: no item runs; the next one starts a fresh count
            return false;
        }

        if (_timeSliceTicks == 0)
        {
            return true; // no quota (only tests tick such a context)
        }

        long count = DispatchCount;
        if (count != _sliceSeenCount)
        {
            _sliceSeenCount = count;
            _sliceSeenAt = now;
        }
        else if (count != 0 && now - _sliceSeenAt >= _timeSliceTicks)
        {
            Volatile.Write(ref _sliceExpired, count);
        }

        return true;
    }

    private static long ToStopwatchTicks(TimeSpan? slice) =>
        slice is { } value ? (long)(value.TotalSeconds * System.Diagnostics.Stopwatch.Frequency) : 0;

    private static int ToTickMilliseconds(TimeSpan? slice) =>
        slice is { } value ? Math.Max(1, (int)(value.TotalMilliseconds / 4)) : int.MaxValue;

    private static PrioritySynchronizationContext CurrentLevelContextOf(PriorityContext context, string operation) =>
        CurrentLevelContext is { } current && current.Context == context
            ? current
            : throw NotInThisContext(context, operation);

    private static InvalidOperationException NotInThisContext(PriorityContext context, string operation) =>
        CurrentLevelContext is { } other
            ? new($"{operation} was called on PriorityContext '{context.Name}' by code running in PriorityContext '{other.Context.Name}'. " +
                  "A checkpoint asks about the context the caller runs in: use Priority." + operation + ", or hop first with context.Prioritize(level).")
            : NotInContext(operation);

    /// <summary>Loop thread: whether any level holds an item (a stale bit of the running item's level does not count).</summary>
    private bool HasWaitingWork()
    {
        ulong mask = _queues.NonEmptyMask;
        while (mask != 0)
        {
            int level = LevelQueues.HighestLevel(mask);
            if (!_queues.IsEmpty(level))
            {
                return true;
            }

            mask &= ~(1UL << level);
        }

        return false;
    }

    /// <summary>Called on the loop thread as the loop starts, before any item: records the thread for the inline checks (Prioritize,
    /// Checkpoint), and the slice clock watches the loop when it has a quota (and tests do not drive it).</summary>
    private void OnLoopStarting()
    {
        _loopThread = Thread.CurrentThread;
        if (_timeSliceWatched)
        {
            SliceClock.Shared.Register(this);
        }
    }

    /// <summary>Called on the loop thread as the loop ends, after the last item.</summary>
    private void OnLoopEnding()
    {
        _loopThread = null;
        if (_timeSliceWatched)
        {
            SliceClock.Shared.Unregister(this);
        }
    }

    /// <summary>Called as the loop leaves Park, after it cleared its parked flag: wakes a dormant slice clock (S1 in SliceClock).</summary>
    private void OnUnparked()
    {
        if (_timeSliceWatched)
        {
            SliceClock.Shared.OnLoopWoke();
        }
    }
}
