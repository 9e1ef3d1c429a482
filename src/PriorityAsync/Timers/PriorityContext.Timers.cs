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
public sealed partial class PriorityContext : IAlarmTarget
{
    private const int MaxPooledDelays = 64;

    private readonly object _timerLock = new();
    private readonly TimerHeap _timers = new();
    private readonly Stack<DelaySource> _delayPool = new();
    private readonly LoopTimeProvider _timeProvider;
    private readonly LoopTimeProvider?[] _levelTimeProviders;
    private AlarmRegistration? _alarmRegistration;
    private long _timerSequence;
    private bool _timersClosed;

    // 1: the alarm (or an arming) found the earliest timer due; the loop fires due timers before its next item. See "Timers".
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
    /// at the next <c>await Prioritize</c> checkpoint; on an idle loop it fires within the OS wake-up latency. Its callback then waits
    /// its turn: FIFO behind the work already queued at its level, and after every level above.</para>
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
    internal int ArmedTimerCount
    {
        get
        {
            lock (_timerLock)
            {
                return _timers.Count;
            }
        }
    }

    /// <summary>For tests: whether the flag that tells the loop a timer is due is raised.</summary>
    internal bool TimersDueFlag => Volatile.Read(ref _timersDue) != 0;

    /// <summary>For tests: the number of pooled <see cref="Priority.Delay"/> sources.</summary>
    internal int PooledDelayCount
    {
        get
        {
            lock (_timerLock)
            {
                return _delayPool.Count;
            }
        }
    }

    /// <summary>Gets a <see cref="System.TimeProvider"/> like <see cref="TimeProvider"/>, whose timers' callbacks always run at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public TimeProvider GetTimeProvider(int level)
    {
        ValidateLevel(level);
        LoopTimeProvider? provider = Volatile.Read(ref _levelTimeProviders[level]);
        if (provider is null)
        {
            Interlocked.CompareExchange(ref _levelTimeProviders[level], new LoopTimeProvider(this, level), null);
            provider = _levelTimeProviders[level]!;
        }

        return provider;
    }

    /// <summary>The implementation of <see cref="Priority.Delay"/>.</summary>
    internal ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken)
    {
        long ms = (long)delay.TotalMilliseconds;
        if (ms < -1 || ms > 0xFFFFFFFE)
        {
            throw new ArgumentOutOfRangeException(
                nameof(delay),
                delay,
                $"The delay on the PriorityContext '{Name}' must be between 0 and {0xFFFFFFFE} ms, or Timeout.InfiniteTimeSpan (as for Task.Delay).");
        }

        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        if (delay == TimeSpan.Zero)
        {
            return default;
        }

        int level = CreatingLevel();
        DelaySource source;
        lock (_timerLock)
        {
            if (_timersClosed)
            {
                throw TimersClosedException();
            }

            source = _delayPool.Count > 0 ? _delayPool.Pop() : new DelaySource(this);
            source.Prepare(level);

            // An infinite delay is armed too, at the end of time: it never comes due, but it is dropped (and its awaiter released
            // with ObjectDisposedException) when the context finishes, instead of hanging for ever.
            long now = Stopwatch.GetTimestamp();
            source.Due = ms == -1 ? long.MaxValue : now + LoopTimeProvider.ToStopwatchTicks(delay);
            source.Sequence = ++_timerSequence;
            _timers.Insert(source);
            UpdateAlarmLocked(now);
        }

        var task = new ValueTask(source, source.Version);
        if (cancellationToken.CanBeCanceled)
        {
            source.RegisterCancellation(cancellationToken);
        }

        return task;
    }

    /// <summary>The level a timer created now by the calling code fires at: the current level of this context, else the default one.</summary>
    internal int CreatingLevel() =>
        CurrentLevelContext is { } current && ReferenceEquals(current.Context, this) ? current.Level : DefaultLevel;

    internal ObjectDisposedException TimersClosedException() =>
        new(Name, $"The PriorityContext '{Name}' has finished ({State}), so its TimeProvider can no longer create timers: no loop is left to run them.");

    /// <summary>
    /// Arms, re-arms, disarms (<paramref name="dueTicks"/> -1) or disposes a <see cref="LoopTimer"/>. Any thread.
    /// </summary>
    /// <returns>For <see cref="ITimer.Change"/>: <see langword="false"/> if the timer was disposed or the context finished.</returns>
    internal bool ArmTimer(LoopTimer timer, long dueTicks, long periodTicks, bool disposing)
    {
        lock (_timerLock)
        {
            if (disposing)
            {
                if (timer.TryMarkDisposed())
                {
                    timer.FireRequested = false; // T1: a queued firing will not start
                    _timers.Remove(timer);
                    UpdateAlarmLocked(Stopwatch.GetTimestamp());
                }

                return true;
            }

            if (timer.IsDisposed || _timersClosed)
            {
                return false;
            }

            timer.FireRequested = false; // T1
            _timers.Remove(timer);
            timer.Period = periodTicks > 0 ? periodTicks : 0;
            long now = Stopwatch.GetTimestamp();
            if (dueTicks >= 0)
            {
                timer.Due = now + dueTicks;
                timer.Sequence = ++_timerSequence;
                _timers.Insert(timer);
            }

            UpdateAlarmLocked(now);
            return true;
        }
    }

    /// <summary>A cancellation of a pending delay: takes it out of the heap. Returns true if the caller must queue its firing (D1).</summary>
    internal bool CancelDelay(DelaySource source)
    {
        lock (_timerLock)
        {
            if (!_timers.Remove(source))
            {
                return false; // already fired (its firing is queued or ran) or dropped: too late to cancel
            }

            source.Canceled = true;
            source.FireRequested = true;
            source.ItemQueued = true;
            UpdateAlarmLocked(Stopwatch.GetTimestamp());
            return true;
        }
    }

    /// <summary>On the loop, when a queued firing runs: whether it still must fire (T1). Clears the queued state.</summary>
    internal bool TakeFiring(TimerEntry entry)
    {
        lock (_timerLock)
        {
            entry.ItemQueued = false;
            bool fire = entry.FireRequested;
            entry.FireRequested = false;
            return fire;
        }
    }

    internal void ReturnDelay(DelaySource source)
    {
        lock (_timerLock)
        {
            if (_delayPool.Count < MaxPooledDelays)
            {
                _delayPool.Push(source);
            }
        }
    }

    /// <summary>The alarm thread: the earliest timer is due.</summary>
    void IAlarmTarget.OnAlarm() => RaiseTimersDue();

    /// <summary>Raises the flag, then wakes the loop if parked (the flag is published by a full fence before _parked is read).</summary>
    private void RaiseTimersDue()
    {
        Interlocked.Exchange(ref _timersDue, 1);
        WakeIfParked();
    }

    /// <summary>
    /// Loop thread only (between items, in Park's re-check path, and at Prioritize's inline check): clears the flag, then queues the
    /// firing of every due timer at its level, in due order (ties in arming order), re-arms the periodic ones, and registers the new
    /// earliest due time with the alarm.
    /// </summary>
    private void FireDueTimers()
    {
        // Clear before reading the clock: a raise that lands after this clear is seen at the next check (one extra lap at worst),
        // and a raise before it is for a due time the clock read below has passed (Stopwatch is monotonic across threads).
        Interlocked.Exchange(ref _timersDue, 0);
        lock (_timerLock)
        {
            long now = Stopwatch.GetTimestamp();
            while (_timers.Min is { } entry && entry.Due <= now)
            {
                _timers.RemoveMin();
                if (!entry.FireRequested)
                {
                    entry.FireRequested = true;
                    if (!entry.ItemQueued)
                    {
                        entry.ItemQueued = true;
                        _queues.EnqueueFromConsumer(entry.Level, new WorkItem(TimerEntry.FireCallback, entry, enqueuedAt: PolicyStamp()));
                    }
                }

                // else T2: the previous firing has not run yet; this tick is skipped.
                if (entry.Period > 0)
                {
                    long next = entry.Due + entry.Period;
                    entry.Due = next > now ? next : now + entry.Period; // fell behind: skip the missed ticks
                    entry.Sequence = ++_timerSequence;
                    _timers.Insert(entry);
                }
            }

            UpdateAlarmLocked(now);
        }
    }

    /// <summary>Under the timer lock: points the alarm at the earliest due time, or raises the flag at once if it has passed.</summary>
    private void UpdateAlarmLocked(long now)
    {
        TimerEntry? earliest = _timers.Min;
        if (earliest is null || earliest.Due == long.MaxValue)
        {
            if (_alarmRegistration is not null)
            {
                Alarm.Shared.Clear(_alarmRegistration);
            }
        }
        else if (earliest.Due <= now)
        {
            if (_alarmRegistration is not null)
            {
                Alarm.Shared.Clear(_alarmRegistration);
            }

            RaiseTimersDue(); // due already (a zero due time): no need for the alarm thread
        }
        else
        {
            Alarm.Shared.Set(_alarmRegistration ??= new AlarmRegistration(this), earliest.Due);
        }
    }

    /// <summary>
    /// Once the loop has finished: no timer can be armed any more, and every armed one is dropped (TimerArmedAtFinish). Any thread.
    /// </summary>
    /// <returns>The first exception thrown by a <see cref="WorkDropped"/> handler, or null.</returns>
    private ExceptionDispatchInfo? DropArmedTimers()
    {
        List<TimerEntry>? armed = null;
        lock (_timerLock)
        {
            _timersClosed = true;
            while (_timers.Count > 0)
            {
                (armed ??= []).Add(_timers.RemoveMin());
            }

            if (_alarmRegistration is not null)
            {
                Alarm.Shared.Clear(_alarmRegistration);
            }
        }

        ExceptionDispatchInfo? firstHandlerFailure = null;
        if (armed is null)
        {
            return null;
        }

        foreach (TimerEntry entry in armed)
        {
            CountDrop(entry.Level, DropReason.TimerArmedAtFinish, TimerEntry.FireCallback, entry); // the snapshot's count and the dropped-items metric, as for queued items
            try
            {
                entry.OnDropped();
                WorkDropped?.Invoke(this, new WorkDroppedEventArgs(entry.Level, TimerEntry.FireCallback, entry, DropReason.TimerArmedAtFinish));
            }
            catch (Exception ex)
            {
                firstHandlerFailure ??= ExceptionDispatchInfo.Capture(ex);
            }
        }

        return firstHandlerFailure;
    }
}
