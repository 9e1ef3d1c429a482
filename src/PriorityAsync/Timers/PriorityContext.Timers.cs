using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// Loop-owned timers: the context's TimeProvider, Priority.Delay, the timer heap and the flag the loop checks between items.
// The protocols are described at the top of Context/PriorityContext.cs ("Timers").
public sealed partial class PriorityContext : ITimerHost
{
    // The heap, its lock, the alarm registration, the clock and the delay pool, shared with PriorityThreadPool (Timers/LoopTimers.cs).
    private readonly LoopTimers _loopTimers;
    private readonly LoopTimeProvider _timeProvider;
    private readonly LoopTimeProvider?[] _levelTimeProviders;

    // 1: the alarm (or an arming) found the earliest timer due; the loop fires due timers before its next item. See "Timers". Kept
    // here, not in LoopTimers: the loop reads it once per item.
    private int _timersDue;

    /// <summary>
    /// Gets a <see cref="System.TimeProvider"/> whose timers are kept by this context's loop: a timer's callback runs on the loop, at the
    /// level that was current when the timer was created (when created by code running in this context), or at
    /// <see cref="DefaultLevel"/> (when created from any other thread). Its clock is the system clock.
    /// </summary>
    /// <value>The same instance on every call.</value>
    /// <remarks>
    /// <para>Pass it to anything that takes a <see cref="System.TimeProvider"/>: <c>Task.Delay(delay, context.TimeProvider)</c>,
    /// <c>task.WaitAsync(timeout, context.TimeProvider)</c>, <c>new PeriodicTimer(period, context.TimeProvider)</c>,
    /// <c>new CancellationTokenSource(delay, context.TimeProvider)</c>. Their timers then fire on the loop, without the thread pool:
    /// a starved pool does not delay them.</para>
    /// <para>Accuracy: a timer that comes due while an item runs fires (its callback is queued at its level) before the next item, or
    /// at the next <c>await Prioritize</c> checkpoint; on an idle loop it fires within a millisecond (the loop parks no longer than
    /// until its earliest timer, rounded up to a whole millisecond) plus the loop's wake-up. Its callback then waits its turn: FIFO
    /// behind the work already queued at its level, and after every level above.</para>
    /// <para>Semantics differ from <see cref="System.TimeProvider.System"/> where a single thread allows better: after
    /// <see cref="ITimer.Change"/> or <see cref="IDisposable.Dispose"/> returns, no callback of the earlier arming starts (a firing already
    /// queued is cancelled); a periodic timer has at most one firing queued, its next due time is the previous due time plus the
    /// period, and a timer that fell behind skips the ticks it missed (the next one is a period after the moment it was found late);
    /// a period shorter than a whole millisecond means no period, as for the system timers. An exception escaping a callback goes to
    /// <see cref="UnhandledException"/>, like any callback of the loop.</para>
    /// <para>Timers do not keep the loop alive. A timer still armed when the loop finishes is dropped: counted in
    /// <see cref="PriorityContextSnapshot.DroppedCount"/> and reported through <see cref="WorkDropped"/> with
    /// <see cref="DropReason.TimerArmedAtFinish"/> (<see cref="WorkDroppedEventArgs.State"/> is the <see cref="ITimer"/>). After the
    /// context finished, <see cref="System.TimeProvider.CreateTimer"/> throws <see cref="ObjectDisposedException"/> and
    /// <see cref="ITimer.Change"/> returns <see langword="false"/>.</para>
    /// <para>The callback runs in the <see cref="ExecutionContext"/> captured when the timer was created, unless flow was suppressed.</para>
    /// </remarks>
    public TimeProvider TimeProvider => _timeProvider;

    /// <summary>For tests: the number of timers armed now.</summary>
    internal int ArmedTimerCount => _loopTimers.ArmedCount;

    /// <summary>For tests: whether the flag that tells the loop a timer is due is raised.</summary>
    internal bool TimersDueFlag => Volatile.Read(ref _timersDue) != 0;

    /// <summary>For tests: how long Park would wait now for the earliest loop timer (T3), in milliseconds, or Timeout.Infinite.</summary>
    internal int ParkTimeoutForTests => _loopTimers.ParkTimeoutMilliseconds();

    /// <summary>For tests: the number of pooled <see cref="Priority.Delay"/> sources.</summary>
    internal int PooledDelayCount => _loopTimers.PooledDelayCount;

    /// <summary>Gets a <see cref="System.TimeProvider"/> like <see cref="TimeProvider"/>, whose timers' callbacks always run at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public TimeProvider GetTimeProvider(int level) => LoopTimeProvider.GetOrCreate(_levelTimeProviders, _loopTimers, ValidateLevel(level));

    /// <summary>The implementation of <see cref="Priority.Delay"/>.</summary>
    internal ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken) => _loopTimers.Delay(delay, cancellationToken);

    /// <summary>The level a timer created now by the calling code fires at: the current level of this context, else the default one.</summary>
    internal int CreatingLevel() =>
        CurrentLevelContext is { } current && ReferenceEquals(current.Context, this) ? current.Level : DefaultLevel;

    /// <summary>The clock of the loop timers: a <see cref="Stopwatch"/> timestamp, or the configured provider's.</summary>
    internal long TimerNow() => _loopTimers.Now();

    /// <summary>The configured clock of the loop timers, or <see langword="null"/> for the system clock.</summary>
    internal TimeProvider? TimerClock => _loopTimers.Clock;

    /// <summary>The watchdog thread: the level of an overdue timer, or -1 (see <see cref="LoopTimers.OverdueTimerLevel"/>).</summary>
    internal int OverdueTimerLevel() => _loopTimers.OverdueTimerLevel();

    /// <summary>Park's timed wait ran out (T3): if the earliest timer is due, raise the flag here, on the loop, without waiting for
    /// the alarm thread's ring (which may follow, and costs one empty FireDueTimers lap).</summary>
    private void OnParkTimedOut()
    {
        if (_loopTimers.EarliestIsDue())
        {
            Volatile.Write(ref _timersDue, 1); // the loop's own raise: it is not parked, so no wake-up is needed
        }
    }

    /// <summary>Raises the flag, then wakes the loop if parked (the flag is published by a full fence before _parked is read).</summary>
    private void RaiseTimersDue()
    {
        Interlocked.Exchange(ref _timersDue, 1);
        WakeIfParked();
    }

    /// <summary>
    /// Loop thread only (between items, at a checkpoint and at Prioritize's inline check): clears the flag, then queues the firing of
    /// every due timer at its level, in due order (ties in arming order), re-arms the periodic ones, and registers the new earliest due
    /// time with the alarm.
    /// </summary>
    /// <returns><see langword="false"/> once the context has faulted because its clock threw (T4, here or at an earlier check): the
    /// loop stops, and the code at a checkpoint does not go on.</returns>
    private bool FireDueTimers()
    {
        // Clear before reading the clock: a raise that lands after this clear is seen at the next check (one extra lap at worst),
        // and a raise before it is for a due time the clock read below has passed (Stopwatch is monotonic across threads).
        Interlocked.Exchange(ref _timersDue, 0);
        _loopTimers.FireDue();
        return _fault is null;
    }

    /// <summary>Once the loop has finished: no timer can be armed any more, and every armed one is dropped (TimerArmedAtFinish).</summary>
    private ExceptionDispatchInfo? DropArmedTimers() => _loopTimers.DropArmed();

    string ITimerHost.Kind => nameof(PriorityContext);

    int ITimerHost.CreatingLevel() => CreatingLevel();

    void ITimerHost.Enqueue(int level, SendOrPostCallback callback, object? state, ExecutionContext? executionContext) =>
        Enqueue(level, callback, state, executionContext);

    // Under the timer lock, on the loop thread (FireDueTimers): the consumer's own enqueue, no fence.
    void ITimerHost.EnqueueTimerFiring(int level, TimerEntry entry) =>
        _queues.EnqueueFromConsumer(level, new WorkItem(TimerEntry.FireCallback, entry, enqueuedAt: PolicyStamp()));

    void ITimerHost.RaiseTimersDue() => RaiseTimersDue();

    // T4, on the loop thread (FireDue runs nowhere else): the context faults with the clock's exception, not through
    // UnhandledException, and the flag stays raised, so the loop's next look at it stops the loop: between items at once; after the
    // item running now when the clock threw at the check of one of its awaits (FireDueTimers returned false there: it did not go on).
    void ITimerHost.OnClockFailed(ExceptionDispatchInfo failure)
    {
        _fault ??= failure;
        Volatile.Write(ref _timersDue, 1);
    }

    bool ITimerHost.IsRunningAt(int level) => IsOnLoopThread && CurrentLevelContext?.Level == level;

    // A controller's context is captured as any other context is, so the method resumes through the controller (its level then).
    bool ITimerHost.TryGetOwnLevel(SynchronizationContext current, out int level)
    {
        if (current is PrioritySynchronizationContext own && ReferenceEquals(own.Context, this) && current is not ControllerSynchronizationContext)
        {
            level = own.Level;
            return true;
        }

        level = -1;
        return false;
    }

    void ITimerHost.OnTimerDropped(TimerEntry entry)
    {
        CountDrop(entry.Level, DropReason.TimerArmedAtFinish, TimerEntry.FireCallback, entry); // the snapshot's count and the dropped-items metric, as for queued items
        entry.OnDropped();
        WorkDropped?.Invoke(this, new WorkDroppedEventArgs(entry.Level, TimerEntry.FireCallback, entry, DropReason.TimerArmedAtFinish));
    }
}
