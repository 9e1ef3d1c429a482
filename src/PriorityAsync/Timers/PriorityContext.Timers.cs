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

    // The clock of the loop timers (PriorityContextOptions.TimeProvider): null for the system clock (Stopwatch, the alarm thread and
    // Park's timed wait, T3), else the given provider, whose one timer (_clockTimer) plays the alarm's part (T0) and whose
    // GetTimestamp decides what is due. Set once, in the constructor.
    private TimeProvider? _timerClock;
    private ITimer? _clockTimer;

    // T3: the heap's earliest due timestamp (long.MaxValue: none, or only infinite delays), written under _timerLock whenever the
    // alarm is pointed (UpdateAlarmLocked); read without the lock by Park, which waits no longer than until then.
    private long _earliestDue = long.MaxValue;

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

    /// <summary>For tests: how long Park would wait now for the earliest loop timer (T3), in milliseconds, or Timeout.Infinite.</summary>
    internal int ParkTimeoutForTests => ParkTimeoutMilliseconds();

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
            Interlocked.CompareExchange(ref _levelTimeProviders[level], LoopTimeProvider.Create(this, level), null);
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
            long now = TimerNow();
            source.Due = ms == -1 ? long.MaxValue : now + TimerTicks(delay);
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
                    UpdateAlarmLocked(TimerNow());
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
            long now = TimerNow();
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
            UpdateAlarmLocked(TimerNow());
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

    /// <summary>
    /// Park's wait for the earliest loop timer (T3): how long a parked loop may sleep, in milliseconds rounded up (a timed wait's
    /// resolution), or <see cref="Timeout.Infinite"/> with no timer armed.
    /// </summary>
    private int ParkTimeoutMilliseconds()
    {
        long due = Volatile.Read(ref _earliestDue);
        if (due == long.MaxValue || _timerClock is not null) // another clock: its own timer wakes the loop, not real time passing
        {
            return Timeout.Infinite;
        }

        long ticks = due - Stopwatch.GetTimestamp();
        if (ticks <= 0)
        {
            return 0;
        }

        double ms = Math.Ceiling(ticks * 1000.0 / Stopwatch.Frequency);
        return ms >= int.MaxValue ? int.MaxValue - 1 : (int)ms;
    }

    /// <summary>Park's timed wait ran out (T3): if the earliest timer is due, raise the flag here, on the loop, without waiting for
    /// the alarm thread's ring (which may follow, and costs one empty FireDueTimers lap).</summary>
    private void OnParkTimedOut()
    {
        if (Stopwatch.GetTimestamp() >= Volatile.Read(ref _earliestDue))
        {
            Volatile.Write(ref _timersDue, 1); // the loop's own raise: it is not parked, so no wake-up is needed
        }
    }

    /// <summary>The clock of the loop timers: a <see cref="Stopwatch"/> timestamp, or the configured provider's.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    internal long TimerNow() => _timerClock is null ? Stopwatch.GetTimestamp() : _timerClock.GetTimestamp();

    /// <summary>A duration in ticks of <see cref="TimerNow"/>'s clock.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    internal long TimerTicks(TimeSpan value) =>
        _timerClock is null ? LoopTimeProvider.ToStopwatchTicks(value) : TicksOnClock(value);

    private long TicksOnClock(TimeSpan value) =>
        value <= TimeSpan.Zero ? 0 : (long)(value.Ticks * ((double)_timerClock!.TimestampFrequency / TimeSpan.TicksPerSecond));

    /// <summary>The configured clock of the loop timers, or <see langword="null"/> for the system clock.</summary>
    internal TimeProvider? TimerClock => _timerClock;

    /// <summary>Constructor: the loop timers' clock (PriorityContextOptions.TimeProvider). The system clock needs nothing; any other
    /// provider must create the one timer that stands for the alarm, now, so a provider that cannot fails here, naming the option.</summary>
#pragma warning disable CA2208 // The bad value is the options' TimeProvider property: the exceptions name it, as PriorityContextOptions.Validate does.
    private void InitializeTimerClock(TimeProvider provider)
    {
        if (ReferenceEquals(provider, TimeProvider.System))
        {
            return;
        }

        if (provider.TimestampFrequency <= 0)
        {
            throw new ArgumentException(
                $"PriorityContextOptions.TimeProvider ({provider}) reports a TimestampFrequency of {provider.TimestampFrequency}; it must be positive.",
                nameof(PriorityContextOptions.TimeProvider));
        }

        ITimer? timer;
        bool restoreFlow = !ExecutionContext.IsFlowSuppressed();
        AsyncFlowControl flow = restoreFlow ? ExecutionContext.SuppressFlow() : default; // the timer outlives whoever created the context
        try
        {
            timer = provider.CreateTimer(s_clockTimerFired, this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
        catch (Exception ex)
        {
            throw new ArgumentException(
                $"PriorityContextOptions.TimeProvider ({provider}) could not create a timer ({ex.GetType().Name}: {ex.Message}); the context's loop timers run on it, so it must.",
                nameof(PriorityContextOptions.TimeProvider),
                ex);
        }
        finally
        {
            if (restoreFlow)
            {
                flow.Undo();
            }
        }

        _clockTimer = timer ?? throw new ArgumentException(
            $"PriorityContextOptions.TimeProvider ({provider}) returned null from CreateTimer; the context's loop timers run on its timers, so it must return one.",
            nameof(PriorityContextOptions.TimeProvider));
        _timerClock = provider;
    }
#pragma warning restore CA2208

    private static readonly TimerCallback s_clockTimerFired = static state => ((PriorityContext)state!).RaiseTimersDue();

    /// <summary>
    /// Under the timer lock, with another clock (T0 for it): points its timer at the earliest due time, rounded up to the next tick of
    /// <see cref="TimeSpan"/> so it never fires before it, or raises the flag at once if that time has passed.
    /// </summary>
    /// <remarks>A provider's timer takes a due time relative to the provider's now, read again inside <see cref="ITimer.Change"/>; if
    /// the clock moved between our read and that one (a test advancing a fake clock from another thread), the timer would be pointed
    /// too late, possibly past every later advance. So the clock is read again after the change, and the timer pointed again while it
    /// moved (a few times at most: a clock that never stops moving is off by its drift between two reads, as the alarm is by its
    /// thread's wake-up).</remarks>
    private void UpdateClockTimerLocked(TimerEntry? earliest)
    {
        if (earliest is null || earliest.Due == long.MaxValue)
        {
            _clockTimer!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            return;
        }

        long now = TimerNow();
        for (int attempt = 0; attempt < 4; attempt++)
        {
            if (earliest.Due <= now)
            {
                _clockTimer!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
                RaiseTimersDue();
                return;
            }

            double timeSpanTicks = Math.Ceiling((earliest.Due - now) * ((double)TimeSpan.TicksPerSecond / _timerClock!.TimestampFrequency));
            _clockTimer!.Change(TimeSpan.FromTicks(Math.Max(1, (long)Math.Min(timeSpanTicks, TimeSpan.MaxValue.Ticks / 2))), Timeout.InfiniteTimeSpan);
            long after = TimerNow();
            if (after == now)
            {
                return; // the clock stood still: the timer fires when it reaches the due time
            }

            now = after;
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
            long now = TimerNow();
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
        Volatile.Write(ref _earliestDue, earliest?.Due ?? long.MaxValue); // T3
        if (_clockTimer is not null)
        {
            UpdateClockTimerLocked(earliest);
            return;
        }
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

            _clockTimer?.Dispose();
            Volatile.Write(ref _earliestDue, long.MaxValue);
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
