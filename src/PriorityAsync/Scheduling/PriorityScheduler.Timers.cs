using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// Loop-owned timers: the scheduler's TimeProvider, Priority.Delay, and the flag its threads read between items ([T-FLAG] to [T-CLOCK]).
public abstract partial class PriorityScheduler
{
    private readonly LoopTimers _loopTimers;
    private readonly LoopTimeProvider _timeProvider;
    private readonly LoopTimeProvider?[] _levelTimeProviders;

    // 1: a timer is due; fired before the next item, at the next checkpoint or inline Prioritize ([T-FLAG]). In the scheduler, not in
    // LoopTimers: it is read once per item.
    private protected int _timersDue;

    /// <summary>
    /// Gets a <see cref="System.TimeProvider"/> whose timers are kept by this scheduler: a timer's callback runs on it, at the level that
    /// was current when the timer was created (when created by code running on this scheduler), or at <see cref="DefaultLevel"/>. Its
    /// clock is <see cref="PrioritySchedulerOptions.TimeProvider"/> (the system clock by default).
    /// </summary>
    /// <value>The same instance on every call.</value>
    /// <remarks>
    /// <para>Pass it to anything that takes a <see cref="System.TimeProvider"/>: <c>Task.Delay(delay, scheduler.TimeProvider)</c>,
    /// <c>task.WaitAsync(timeout, scheduler.TimeProvider)</c>, <c>new PeriodicTimer(period, scheduler.TimeProvider)</c>,
    /// <c>new CancellationTokenSource(delay, scheduler.TimeProvider)</c>. Their timers then fire on the scheduler, without the .NET
    /// thread pool: a starved pool does not delay them.</para>
    /// <para>Accuracy: a timer that comes due while an item runs fires (its callback is queued at its level) before the next item, or
    /// at the next <c>await Prioritize</c> or checkpoint; on an idle scheduler it fires within a millisecond (a parked thread waits no
    /// longer than until the earliest timer, rounded up to a whole millisecond) plus one wake-up. Its callback then waits its turn:
    /// FIFO behind the work already queued at its level, and after every level above.</para>
    /// <para>Semantics differ from <see cref="System.TimeProvider.System"/> where the scheduler allows better: after
    /// <see cref="ITimer.Change"/> or <see cref="IDisposable.Dispose"/> returns, no callback of the earlier arming starts (a firing
    /// already queued is cancelled); a periodic timer has at most one firing queued, its next due time is the previous due time plus
    /// the period, and a timer that fell behind skips the ticks it missed; a period shorter than a whole millisecond means no period,
    /// as for the system timers. An exception escaping a callback goes to <see cref="UnhandledException"/>, like any callback.</para>
    /// <para>Timers do not keep the scheduler alive. A timer still armed when it finishes is dropped: counted in
    /// <see cref="PrioritySchedulerSnapshot.DroppedCount"/> and reported through <see cref="WorkDropped"/> with
    /// <see cref="DropReason.TimerArmedAtFinish"/> (<see cref="WorkDroppedEventArgs.State"/> is the <see cref="ITimer"/>). After the
    /// end, <see cref="System.TimeProvider.CreateTimer"/> throws <see cref="ObjectDisposedException"/> and <see cref="ITimer.Change"/>
    /// returns <see langword="false"/>.</para>
    /// <para>The callback runs in the <see cref="ExecutionContext"/> captured when the timer was created, unless flow was suppressed.</para>
    /// </remarks>
    public TimeProvider TimeProvider => _timeProvider;

    /// <summary>Gets a <see cref="System.TimeProvider"/> like <see cref="TimeProvider"/>, whose timers' callbacks always run at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public TimeProvider GetTimeProvider(int level) => LoopTimeProvider.GetOrCreate(_levelTimeProviders, _loopTimers, ValidateLevel(level));

    /// <summary>For tests: the number of timers armed now.</summary>
    internal int ArmedTimerCount => _loopTimers.ArmedCount;

    /// <summary>For tests: whether the flag that tells the threads a timer is due is raised.</summary>
    internal bool TimersDueFlag => Volatile.Read(ref _timersDue) != 0;

    /// <summary>For tests: how long a parking thread would wait now for the earliest timer, in milliseconds, or Timeout.Infinite.</summary>
    internal int ParkTimeoutForTests => _loopTimers.ParkTimeoutMilliseconds();

    /// <summary>For tests: the number of pooled <see cref="Priority.Delay"/> sources.</summary>
    internal int PooledDelayCount => _loopTimers.PooledDelayCount;

    /// <summary>The implementation of <see cref="Priority.Delay"/>.</summary>
    internal ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken) => _loopTimers.Delay(delay, cancellationToken);

    /// <summary>The watchdog: the level of an overdue timer, or -1.</summary>
    internal int OverdueTimerLevel() => _loopTimers.OverdueTimerLevel();

    /// <summary>Fires the due timers if the flag is raised and this thread is the one that clears it ([T-FLAG]).</summary>
    /// <returns>False once the scheduler has faulted (its clock threw, [T-CLOCK]): the caller stops, or does not go on.</returns>
    private protected bool FireDueTimers()
    {
        // Clear before reading the clock: a raise after the clear is seen at the next check; one before it is for a due time the
        // clock read below has passed.
        if (Volatile.Read(ref _timersDue) != 0 && Interlocked.Exchange(ref _timersDue, 0) != 0)
        {
            _loopTimers.FireDue();
        }

        if (Volatile.Read(ref _fault) is null)
        {
            return true;
        }

        Interlocked.Exchange(ref _timersDue, 1); // faulted: the flag stays raised, so every later look stops its caller ([T-CLOCK])
        return false;
    }

    /// <summary>A parked thread's timed wait ran out ([T-PARK]): if the earliest timer is due, it raises the flag itself instead of
    /// waiting for the alarm thread's ring.</summary>
    private protected void OnParkTimedOut()
    {
        if (_loopTimers.EarliestIsDue())
        {
            Interlocked.Exchange(ref _timersDue, 1); // this thread is awake: no wake-up needed
        }
    }

    /// <summary>How long a parking thread may sleep before the earliest timer comes due ([T-PARK]).</summary>
    private protected int ParkTimeoutMilliseconds() => _loopTimers.ParkTimeoutMilliseconds();

    // ---- What LoopTimers asks of its scheduler ------------------------------------------------------------------------------------

    /// <summary>The level a timer created now by the calling code fires at: the caller's level on this scheduler, else the default one.</summary>
    internal int CreatingLevel() =>
        SynchronizationContext.Current is PrioritySynchronizationContext current && current.Scheduler == this ? current.Level : DefaultLevel;

    /// <summary>The flow the calling code runs in on this scheduler, if any: a timer it creates at its own level fires through the flow,
    /// so a raise of the flow moves the firing too ([X-MOVE]).</summary>
    internal FlowContext? CreatingFlow() =>
        SynchronizationContext.Current is FlowContext current && current.Scheduler == this ? current.LinkForTimer() : null;

    /// <summary>Queues the firing of a due timer, under the timer lock, on a thread that runs the scheduler's items (so the scheduler
    /// is running: no end to race). The loop queues as its own consumer ([Q-CONSUMER]); a pool thread as a producer, waking a parked
    /// thread.</summary>
    internal void EnqueueTimerFiring(int level, TimerEntry entry)
    {
        if (entry.Route is { } flow)
        {
            flow.QueueTimerFiring(entry); // into the flow's own queue: a place at its level now ([X-MOVE])
            return;
        }

        EnqueueFromTimers(level, TimerEntry.FireCallback, entry);
    }

    /// <summary>Queues an item for the timers, under the timer lock, on a thread of the running scheduler (no end to race, so no drop).</summary>
    internal void EnqueueFromTimers(int level, SendOrPostCallback callback, object state)
    {
        var item = new WorkItem(callback, state, enqueuedAt: _stampAlways != 0 ? Timestamp() : 0);
        if (_consumer == Thread.CurrentThread)
        {
            _queues.EnqueueFromConsumer(level, item);
            return;
        }

        _queues.Enqueue(level, item);
        WakeForWork();
    }

    /// <summary>The earliest timer is due ([T-ALARM]): raise the flag (a full fence), then wake a parked thread.</summary>
    internal void RaiseTimersDue()
    {
        Interlocked.Exchange(ref _timersDue, 1);
        WakeForTimers();
    }

    /// <summary>[T-ALARM]'s wake-up, called under the timer lock or the alarm's: a parked thread is woken as for a post; a context
    /// its host drives tells the host from elsewhere, since its callback is user code ([H-WAKE]).</summary>
    private protected virtual void WakeForTimers() => WakeForWork();

    /// <summary>The loop timers' clock now (<see cref="PrioritySchedulerOptions.TimeProvider"/>'s timestamp, Stopwatch for the
    /// system's): the clock a host's drain budget is measured on ([H-BUDGET]).</summary>
    private protected long ClockNow() => _loopTimers.Now();

    /// <summary><paramref name="duration"/> in ticks of <see cref="ClockNow"/>'s clock.</summary>
    private protected long ClockTicks(TimeSpan duration) => _loopTimers.Ticks(duration);

    /// <summary><paramref name="ticks"/> of <see cref="ClockNow"/>'s clock as a duration.</summary>
    private protected TimeSpan ClockDuration(long ticks)
    {
        long frequency = _loopTimers.Clock?.TimestampFrequency ?? System.Diagnostics.Stopwatch.Frequency;
        return ticks <= 0 ? TimeSpan.Zero : TimeSpan.FromTicks((long)(ticks * ((double)TimeSpan.TicksPerSecond / frequency)));
    }

    /// <summary>[T-CLOCK]: the clock threw in FireDue, on a thread of the scheduler, outside the timer lock: the scheduler faults with
    /// the provider's own exception (not through UnhandledException: no handler may mark it handled), and the flag is raised again, so
    /// that the next look at it stops its caller.</summary>
    internal void OnClockFailed(ExceptionDispatchInfo failure)
    {
        SetFault(failure);
        Interlocked.Exchange(ref _timersDue, 1);
    }

    /// <summary>Whether <paramref name="current"/> is one of this scheduler's per-level or flow contexts (a controller's is not: a method
    /// that captured it resumes through the controller).</summary>
    internal bool IsOwnContext(SynchronizationContext current) =>
        current is PrioritySynchronizationContext own && own.Scheduler == this && current is not ControllerSynchronizationContext;

    /// <summary>Counts and reports a timer dropped as the scheduler finished; a throwing WorkDropped handler's exception propagates.</summary>
    internal void OnTimerDropped(TimerEntry entry)
    {
        CountDrop(entry.Level, DropReason.TimerArmedAtFinish, TimerEntry.FireCallback, entry);
        entry.OnDropped();
        WorkDropped?.Invoke(this, new WorkDroppedEventArgs(entry.Level, TimerEntry.FireCallback, entry, DropReason.TimerArmedAtFinish));
    }
}
