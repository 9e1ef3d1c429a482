using System;
using System.Runtime.CompilerServices;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// Checkpoints and the time quota: Checkpoint(), ShouldYield, and the flag the slice clock raises.
//
// Protocol (C1). _sliceExpired holds 0; or the dispatch count K of an item the slice clock saw running for a whole TimeSlice while
// some level's bit was set (work may be waiting); or SliceClockDormant (-1), written by the clock before it sleeps (S1 in
// Checkpoints/SliceClock.cs). The loop's dispatch count (DispatchCount, the sum of _runPerLevel) goes up by one as each item starts,
// so while item K runs it is K, and a raise is only believed while DispatchCount equals it: the same item is still running. Only the
// slice clock writes raises and the sentinel (TickTimeSlice, MarkSliceClockDormant); a checkpoint clears the flag with a
// compare-exchange, which cannot undo a newer write: when the raise is for an item that has ended, when it finds the sentinel (and
// wakes the clock), and when it finds nothing waiting after all (stale mask bits; it clears them). So the loop does nothing per item
// for the quota (no write, no clock read), and a checkpoint's fast path reads the flag and nothing more: in a long item that has used
// up its quota with nothing waiting the flag is 0, and the checkpoint costs what it costs with the quota off (issue 22; it used to
// keep the flag raised and take the slow path at every checkpoint, 3x slower).
//
// Why a raise is right (C2): the clock remembers the first tick at which it saw count K with the loop not parked (_sliceSeenAt).
// Count K at that tick means item K had started (the count goes up before the item runs). If a checkpoint later sees DispatchCount
// == K, item K is still running, so it has run at least (now - _sliceSeenAt) >= TimeSlice. The counters are read one by one from
// another thread, but each only grows, so a sum read between two moments lies between the counts at those moments: two equal sums at
// two ticks mean no item started in between. The clock ticks every quarter slice and raises only while the mask shows a bit, so an
// item is told to yield at its first checkpoint after the first tick at which it has run a slice and work may wait: between 1 and
// about 1.5 slices into the item when work was already waiting, else within a tick (a quarter slice, at least 1 ms) after work is
// queued. An item that started while the clock slept (every loop parked) is watched from its first checkpoint (S1): the same bounds,
// counted from that checkpoint. A checkpoint yields only if work really waits (HasWaitingWork), so a stale bit never makes it yield.
public sealed partial class PriorityContext : ISliceWatched
{
    // Stopwatch ticks of the quota; 0: no quota. Copied from the options.
    private readonly long _timeSliceTicks;
    private readonly bool _timeSliceWatched;

    // The thread running the loop, while it runs (null before and after): Thread.CurrentThread is compared with it, because the JIT
    // reuses the thread-local base it already loaded for SynchronizationContext.Current; a second [ThreadStatic] costs one more call.
    private Thread? _loopThread;

    /// <summary>The value of the quota flag while the slice clock sleeps (S1): the next checkpoint wakes it.</summary>
    internal const long SliceClockDormant = -1;

    // C1: 0, the dispatch count of the item that has used up its quota, or SliceClockDormant. Written by the slice clock, cleared by
    // checkpoints.
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

        if (Volatile.Read(ref _timersDue) != 0 && !FireDueTimers()) // a due timer above the caller's level runs first (see "Timers")
        {
            return true; // the clock threw: the context faulted (T4), and the caller must not go on
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

        if (expired == SliceClockDormant)
        {
            // The clock sleeps (S1): wake it, so it watches this item from now on. The compare-exchange is the full fence S1 needs
            // before the clock's _dormant is read.
            Interlocked.CompareExchange(ref _sliceExpired, 0, SliceClockDormant);
            SliceClock.Shared.OnCheckpointFoundDormant();
            return false;
        }

        if (expired == DispatchCount && _queues.HasWaitingWork())
        {
            return true; // the quota is used up and work waits: yield (the flag stays; the next item clears it as stale)
        }

        // Raised for an item that has ended, or nothing waits after all (HasWaitingWork cleared the stale bits): clear it, so the
        // checkpoints that follow take the fast path. The clock raises it again if the item still runs when work is queued (C1, C2).
        Interlocked.CompareExchange(ref _sliceExpired, 0, expired);
        return false;
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
        else if (count != 0 && now - _sliceSeenAt >= _timeSliceTicks && _queues.NonEmptyMask != 0)
        {
            Volatile.Write(ref _sliceExpired, count); // C1: only while work may wait, so an unneeded raise costs one slow checkpoint a tick
        }

        return true;
    }

    /// <summary>The slice clock, before it sleeps: makes the next checkpoint of this loop wake it (S1 in SliceClock).</summary>
    internal void MarkSliceClockDormant() => Interlocked.Exchange(ref _sliceExpired, SliceClockDormant);

    int ISliceWatched.TimeSliceTickMilliseconds => TimeSliceTickMilliseconds;

    bool ISliceWatched.IsParked => IsParked;

    bool ISliceWatched.TickTimeSlice(long now) => TickTimeSlice(now);

    void ISliceWatched.MarkSliceClockDormant() => MarkSliceClockDormant();

    private static PrioritySynchronizationContext CurrentLevelContextOf(PriorityContext context, string operation) =>
        CurrentLevelContext is { } current && current.Context == context
            ? current
            : throw NotInThisContext(context, operation);

    private static InvalidOperationException NotInThisContext(PriorityContext context, string operation) =>
        CurrentLevelContext is { } other
            ? new($"{operation} was called on PriorityContext '{context.Name}' by code running in PriorityContext '{other.Context.Name}'. " +
                  "A checkpoint asks about the context the caller runs in: use Priority." + operation + ", or hop first with context.Prioritize(level).")
            : NotInContext(
                $"context.{operation} (of the PriorityContext '{context.Name}')",
                $"Priority.{operation} asks about the scheduler the caller runs on, a PriorityContext or a PriorityThreadPool.");

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
}
