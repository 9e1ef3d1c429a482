using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// The timers a scheduler fires itself: the heap of armed loop timers and <see cref="Priority.Delay"/> sources, its lock, the alarm
/// registration ([T-ALARM]), the earliest due time a parked thread waits for ([T-PARK]), the clock (the system's, or the options'
/// <c>TimeProvider</c> with its one timer standing for the alarm), and the delay pool. The flag the threads read between items stays
/// in the scheduler ([T-FLAG]); <see cref="FireDue"/> is called by whichever thread cleared it.
/// </summary>
/// <remarks>Lock order: the timer lock, then the alarm's lock; no user code runs under either. A clock that throws: [T-CLOCK].</remarks>
internal sealed class LoopTimers : IAlarmTarget
{
    private const int MaxPooledDelays = 64;

    private static readonly TimerCallback s_clockTimerFired = static state => ((LoopTimers)state!).Host.RaiseTimersDue();

    private readonly object _lock = new();
    private readonly TimerHeap _heap = new();
    private readonly Stack<DelaySource> _delayPool = new();
    private AlarmRegistration? _alarmRegistration;
    private long _sequence;
    private bool _closed;
    private bool _clockFailed; // [T-CLOCK]: the clock threw in FireDue, and the scheduler faulted with it; under _lock

    // Null for the system clock (Stopwatch, the alarm thread, the parked thread's timed wait); else the given provider, whose one
    // timer plays the alarm's part ([T-ALARM]) and whose GetTimestamp decides what is due.
    private readonly TimeProvider? _clock;
    private readonly ITimer? _clockTimer;

    // [T-PARK]: the heap's earliest due timestamp (long.MaxValue: none, or only infinite delays); written under _lock, read without it.
    private long _earliestDue = long.MaxValue;

    /// <summary>Creates the timers of <paramref name="host"/> on <paramref name="provider"/>.</summary>
    /// <param name="host">The scheduler.</param>
    /// <param name="provider">The clock (the options' <c>TimeProvider</c>).</param>
    /// <param name="optionName">The option that gave it, for messages (for example "PriorityContextOptions.TimeProvider").</param>
    /// <remarks>The system clock needs nothing; any other provider must create the one timer that stands for the alarm, now, so a
    /// provider that cannot fails here, naming the option.</remarks>
#pragma warning disable CA2208 // The bad value is the options' TimeProvider property: the exceptions name it.
    public LoopTimers(PriorityScheduler host, TimeProvider provider, string optionName)
    {
        Host = host;
        if (ReferenceEquals(provider, TimeProvider.System))
        {
            return;
        }

        if (provider.TimestampFrequency <= 0)
        {
            throw new ArgumentException(
                $"{optionName} ({provider}) reports a TimestampFrequency of {provider.TimestampFrequency}; it must be positive.",
                "TimeProvider");
        }

        ITimer? timer;
        bool restoreFlow = !ExecutionContext.IsFlowSuppressed();
        AsyncFlowControl flow = restoreFlow ? ExecutionContext.SuppressFlow() : default; // the timer outlives whoever created the scheduler
        try
        {
            timer = provider.CreateTimer(s_clockTimerFired, this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
        catch (Exception ex)
        {
            throw new ArgumentException(
                $"{optionName} ({provider}) could not create a timer ({ex.GetType().Name}: {ex.Message}); the {host.Kind}'s loop timers run on it, so it must.",
                "TimeProvider",
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
            $"{optionName} ({provider}) returned null from CreateTimer; the {host.Kind}'s loop timers run on its timers, so it must return one.",
            "TimeProvider");
        _clock = provider;
    }
#pragma warning restore CA2208

    public PriorityScheduler Host { get; }

    /// <summary>The configured clock of the loop timers, or <see langword="null"/> for the system clock.</summary>
    public TimeProvider? Clock => _clock;

    /// <summary>For tests: the number of timers armed now.</summary>
    public int ArmedCount
    {
        get
        {
            lock (_lock)
            {
                return _heap.Count;
            }
        }
    }

    /// <summary>For tests: the number of pooled <see cref="Priority.Delay"/> sources.</summary>
    public int PooledDelayCount
    {
        get
        {
            lock (_lock)
            {
                return _delayPool.Count;
            }
        }
    }

    /// <summary>The clock of the loop timers: a <see cref="Stopwatch"/> timestamp, or the configured provider's.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    public long Now() => _clock is null ? Stopwatch.GetTimestamp() : _clock.GetTimestamp();

    /// <summary>A duration in ticks of <see cref="Now"/>'s clock.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    public long Ticks(TimeSpan value) =>
        _clock is null ? LoopTimeProvider.ToStopwatchTicks(value) : TicksOnClock(value);

    private long TicksOnClock(TimeSpan value) =>
        value <= TimeSpan.Zero ? 0 : (long)(value.Ticks * ((double)_clock!.TimestampFrequency / TimeSpan.TicksPerSecond));

    public ObjectDisposedException ClosedException() =>
        new(Host.Name, $"{Host.SubjectAtStart} has finished ({Host.State}), so its TimeProvider can no longer create timers: no loop is left to run them.");

    /// <summary>The implementation of <see cref="Priority.Delay"/>.</summary>
    public ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken)
    {
        long ms = (long)delay.TotalMilliseconds;
        if (ms < -1 || ms > 0xFFFFFFFE)
        {
            throw new ArgumentOutOfRangeException(
                nameof(delay),
                delay,
                $"The delay on {Host.Subject} must be between 0 and {0xFFFFFFFE} ms, or Timeout.InfiniteTimeSpan (as for Task.Delay).");
        }

        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        if (delay == TimeSpan.Zero)
        {
            return default;
        }

        int level = Host.CreatingLevel();
        FlowContext? route = Host.CreatingFlow();
        DelaySource source;
        lock (_lock)
        {
            if (_closed)
            {
                throw ClosedException();
            }

            source = _delayPool.Count > 0 ? _delayPool.Pop() : new DelaySource(this);
            source.Prepare(level, route);

            // An infinite delay is armed too, at the end of time: it never comes due, but it is dropped (and its awaiter released
            // with ObjectDisposedException) when the scheduler finishes, instead of hanging for ever.
            InsertLocked(source, ms == -1 ? long.MaxValue : Ticks(delay)); // a clock that throws: to this caller, nothing armed ([T-CLOCK])
        }

        var task = new ValueTask(source, source.Version);
        if (cancellationToken.CanBeCanceled)
        {
            source.RegisterCancellation(cancellationToken);
        }

        return task;
    }

    /// <summary>Arms, re-arms, disarms (<paramref name="dueTicks"/> -1) or disposes a <see cref="LoopTimer"/>. Any thread.</summary>
    /// <returns>For <see cref="ITimer.Change"/>: <see langword="false"/> if the timer was disposed or the scheduler finished.</returns>
    public bool ArmTimer(LoopTimer timer, long dueTicks, long periodTicks, bool disposing)
    {
        lock (_lock)
        {
            if (disposing)
            {
                if (timer.TryMarkDisposed())
                {
                    timer.FireRequested = false; // [T-TIMER]: a queued firing will not start
                    RemoveLocked(timer);
                }

                return true;
            }

            if (timer.IsDisposed || _closed)
            {
                return false;
            }

            timer.FireRequested = false; // [T-TIMER]
            timer.Period = periodTicks > 0 ? periodTicks : 0;
            if (dueTicks < 0)
            {
                RemoveLocked(timer);
            }
            else
            {
                _heap.Remove(timer); // the earlier arming; a clock that throws below leaves the timer disarmed ([T-CLOCK])
                InsertLocked(timer, dueTicks);
            }

            return true;
        }
    }

    /// <summary>
    /// Under the lock, a caller arming <paramref name="entry"/> (not in the heap) <paramref name="dueTicks"/> from now (long.MaxValue:
    /// at the end of time), then pointing the alarm at the new earliest due time. If the clock throws, the entry is left out of the
    /// heap, the flag is raised ([T-ALARM] by its second clause) and the exception goes on to the caller ([T-CLOCK]).
    /// </summary>
    private void InsertLocked(TimerEntry entry, long dueTicks)
    {
        try
        {
            long now = Now();
            entry.Due = dueTicks == long.MaxValue ? long.MaxValue : now + dueTicks;
            entry.Sequence = ++_sequence;
            _heap.Insert(entry);
            UpdateAlarmLocked(now);
        }
        catch
        {
            _heap.Remove(entry);
            Host.RaiseTimersDue();
            throw;
        }
    }

    /// <summary>
    /// Under the lock, a caller disarming <paramref name="entry"/>: takes it out of the heap and, if it was there, points the alarm at
    /// the new earliest due time. If the clock throws, the removal stands and the flag is raised; the caller does not see it
    /// ([T-CLOCK]).
    /// </summary>
    /// <returns>Whether the entry was armed.</returns>
    private bool RemoveLocked(TimerEntry entry)
    {
        if (!_heap.Remove(entry))
        {
            return false; // the heap did not change, nor must the alarm (after the end the heap is empty: the clock is left alone)
        }

        try
        {
            UpdateAlarmLocked(Now());
        }
        catch (Exception)
        {
            Host.RaiseTimersDue();
        }

        return true;
    }

    /// <summary>A cancellation of a pending delay: takes it out of the heap. Returns true if the caller must queue its firing ([T-DELAY]).</summary>
    public bool CancelDelay(DelaySource source)
    {
        lock (_lock)
        {
            if (!RemoveLocked(source)) // never throws ([T-CLOCK]): the caller must queue the firing
            {
                return false; // already fired (its firing is queued or ran) or dropped: too late to cancel
            }

            source.Canceled = true;
            source.FireRequested = true;
            source.ItemQueued = true;
            return true;
        }
    }

    /// <summary>When a queued firing runs: whether it still must fire ([T-TIMER]). Clears the queued state.</summary>
    public bool TakeFiring(TimerEntry entry)
    {
        lock (_lock)
        {
            entry.ItemQueued = false;
            bool fire = entry.FireRequested;
            entry.FireRequested = false;
            return fire;
        }
    }

    public void ReturnDelay(DelaySource source)
    {
        lock (_lock)
        {
            if (_delayPool.Count < MaxPooledDelays)
            {
                _delayPool.Push(source);
            }
        }
    }

    /// <summary>
    /// A parking thread's wait for the earliest loop timer ([T-PARK]): how long it may sleep, in milliseconds rounded up (a timed wait's
    /// resolution), or <see cref="Timeout.Infinite"/> with no timer armed.
    /// </summary>
    public int ParkTimeoutMilliseconds()
    {
        long due = Volatile.Read(ref _earliestDue);
        if (due == long.MaxValue || _clock is not null) // another clock: its own timer wakes the scheduler, not real time passing
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

    /// <summary>After a parked thread's timed wait ran out ([T-PARK]): whether the earliest timer is due (the thread then raises the flag itself).</summary>
    public bool EarliestIsDue() => Stopwatch.GetTimestamp() >= Volatile.Read(ref _earliestDue);

    /// <summary>The alarm thread: the earliest timer is due.</summary>
    void IAlarmTarget.OnAlarm() => Host.RaiseTimersDue();

    /// <summary>
    /// Called by the scheduler after it cleared its flag ([T-FLAG]): queues the firing of every due timer at its level, in due order
    /// (ties in arming order), re-arms the periodic ones, and registers the new earliest due time with the alarm.
    /// </summary>
    /// <remarks>Never throws: what the clock throws goes to <see cref="PriorityScheduler.OnClockFailed"/>, once, outside the lock, and
    /// from then on this does nothing ([T-CLOCK]).</remarks>
    public void FireDue()
    {
        ExceptionDispatchInfo clockFailure;
        lock (_lock)
        {
            if (_clockFailed)
            {
                return;
            }

            try
            {
                long now = Now();
                while (_heap.Min is { } entry && entry.Due <= now)
                {
                    _heap.RemoveMin();
                    if (!entry.FireRequested)
                    {
                        entry.FireRequested = true;
                        if (!entry.ItemQueued)
                        {
                            entry.ItemQueued = true;
                            Host.EnqueueTimerFiring(entry.Level, entry);
                        }
                    }

                    // else the previous firing has not run yet: this tick is skipped ([T-TIMER]).
                    if (entry.Period > 0)
                    {
                        long next = entry.Due + entry.Period;
                        entry.Due = next > now ? next : now + entry.Period; // fell behind: skip the missed ticks
                        entry.Sequence = ++_sequence;
                        _heap.Insert(entry);
                    }
                }

                UpdateAlarmLocked(now);
                return;
            }
            catch (Exception ex)
            {
                _clockFailed = true;
                clockFailure = ExceptionDispatchInfo.Capture(ex);
            }
        }

        Host.OnClockFailed(clockFailure);
    }

    /// <summary>
    /// The watchdog thread: the level of the earliest armed timer if its due time has passed, else -1. Only the scheduler's threads move
    /// due timers into its queues, so a blocked scheduler leaves an overdue timer in the heap, where this sees it.
    /// </summary>
    /// <remarks>A clock that throws reads as "no overdue timer": the scheduler reports it itself ([T-CLOCK]).</remarks>
    public int OverdueTimerLevel()
    {
        lock (_lock)
        {
            try
            {
                return _heap.Min is { } earliest && earliest.Due != long.MaxValue && earliest.Due <= Now() ? earliest.Level : -1;
            }
            catch (Exception)
            {
                return -1;
            }
        }
    }

    /// <summary>Under the lock: points the alarm at the earliest due time, or raises the flag at once if it has passed ([T-ALARM]).</summary>
    private void UpdateAlarmLocked(long now)
    {
        TimerEntry? earliest = _heap.Min;
        Volatile.Write(ref _earliestDue, earliest?.Due ?? long.MaxValue); // [T-PARK]
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

            Host.RaiseTimersDue(); // due already (a zero due time): no need for the alarm thread
        }
        else
        {
            Alarm.Shared.Set(_alarmRegistration ??= new AlarmRegistration(this), earliest.Due);
        }
    }

    /// <summary>
    /// Under the lock, with another clock ([T-ALARM] for it): points its timer at the earliest due time, rounded up to the next tick of
    /// <see cref="TimeSpan"/> so it never fires before it, or raises the flag at once if that time has passed.
    /// </summary>
    /// <remarks>The clock is read again after the change, and the timer pointed again while it moved (a few times at most): the
    /// provider reads its own now inside <see cref="ITimer.Change"/>, and a clock moved in between would leave it pointed too late.</remarks>
    private void UpdateClockTimerLocked(TimerEntry? earliest)
    {
        if (earliest is null || earliest.Due == long.MaxValue)
        {
            _clockTimer!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            return;
        }

        long now = Now();
        for (int attempt = 0; attempt < 4; attempt++)
        {
            if (earliest.Due <= now)
            {
                _clockTimer!.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
                Host.RaiseTimersDue();
                return;
            }

            double timeSpanTicks = Math.Ceiling((earliest.Due - now) * ((double)TimeSpan.TicksPerSecond / _clock!.TimestampFrequency));
            _clockTimer!.Change(TimeSpan.FromTicks(Math.Max(1, (long)Math.Min(timeSpanTicks, TimeSpan.MaxValue.Ticks / 2))), Timeout.InfiniteTimeSpan);
            long after = Now();
            if (after == now)
            {
                return; // the clock stood still: the timer fires when it reaches the due time
            }

            now = after;
        }
    }

    /// <summary>
    /// Once the scheduler has finished: no timer can be armed any more, and every armed one is dropped (TimerArmedAtFinish). Any thread.
    /// </summary>
    /// <returns>What the clock's timer threw when disposed ([T-CLOCK]), else the first exception thrown by a WorkDropped handler, or null.</returns>
    public ExceptionDispatchInfo? DropArmed()
    {
        List<TimerEntry>? armed = null;
        ExceptionDispatchInfo? clockFailure = null;
        lock (_lock)
        {
            _closed = true;
            while (_heap.Count > 0)
            {
                (armed ??= []).Add(_heap.RemoveMin());
            }

            if (_alarmRegistration is not null)
            {
                Alarm.Shared.Clear(_alarmRegistration);
            }

            try
            {
                _clockTimer?.Dispose();
            }
            catch (Exception ex)
            {
                clockFailure = ExceptionDispatchInfo.Capture(ex); // [T-CLOCK]: the armed timers are still dropped, then it surfaces
            }

            Volatile.Write(ref _earliestDue, long.MaxValue);
        }

        if (armed is null)
        {
            return clockFailure;
        }

        ExceptionDispatchInfo? firstHandlerFailure = clockFailure;
        foreach (TimerEntry entry in armed)
        {
            try
            {
                Host.OnTimerDropped(entry);
            }
            catch (Exception ex)
            {
                firstHandlerFailure ??= ExceptionDispatchInfo.Capture(ex);
            }
        }

        return firstHandlerFailure;
    }
}
