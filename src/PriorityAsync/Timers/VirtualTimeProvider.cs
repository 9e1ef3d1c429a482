using System;
using System.Collections.Generic;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// A clock for tests that moves only when told to: by <see cref="Advance"/>, or by the <see cref="PriorityContext"/> it drives, which
/// jumps it to its earliest armed timer whenever the loop has nothing to run (as Tokio's paused clock does). A test of code that waits
/// (leases, retries, timeouts, periodic work) then runs on one thread, exactly, in a fraction of the time it describes, and gives the
/// same result on a busy machine as on an idle one.
/// </summary>
/// <remarks>
/// <para>Give it as <see cref="PrioritySchedulerOptions.TimeProvider"/>. The loop's timers (<see cref="Priority.Delay"/>,
/// <see cref="PriorityScheduler.TimeProvider"/>, <see cref="PriorityScheduler.GetTimeProvider(int)"/>), its policies' waits and run times and
/// its instruments then run on this clock. Code that stands for CPU work calls <see cref="Advance"/> (a simulated core: the loop runs
/// nothing else meanwhile, and the timers that came due fire after it, in due order).</para>
/// <para>What the loop may skip ([V-ADVANCE] in docs/design.md): the loop advances the clock only on its own thread, when no
/// item is queued at any level, no timer is due, an operation is outstanding (the loop would otherwise park) and no
/// <see cref="HoldAutoAdvance"/> is active; and it advances it exactly to the earliest due time among this clock's armed timers, never
/// past it. So every timer fires at its own due time, and everything runnable at one instant runs before time moves on.</para>
/// <para>What it cannot see ([V-BLIND]): work that is neither on the loop nor on this clock. While the loop awaits a thread-pool task, real
/// I/O, or a post from another thread, it looks idle: if a timer is armed, the clock jumps to it, and the awaited work arrives at a
/// later virtual time than it would have (a timeout on this clock fires before a real socket answers). Keep the code under test on
/// the loop and this clock, or hold the clock with <see cref="HoldAutoAdvance"/> while such work is in flight. With no timer armed the
/// loop simply waits for it.</para>
/// <para>A context its host drives (<see cref="PriorityContext.AttachToCurrentThread"/>) never parks, so it never advances this
/// clock: the host does, with <see cref="Advance"/>, as a frame clock would, and its next drain runs what came due.</para>
/// <para>One loop at a time: a second <see cref="PriorityContext"/> created on this clock while the first has not finished throws
/// <see cref="ArgumentException"/> (each would move the clock while the other is busy). A <see cref="PriorityThreadPool"/> cannot use it
/// (its threads cannot tell when the whole pool is idle): its constructor throws <see cref="ArgumentException"/>.</para>
/// <para>The time quota (<see cref="PrioritySchedulerOptions.TimeSlice"/>) is off on this clock: it measures how long the loop thread
/// runs, which virtual time cannot tell, and a machine's hiccup would change the schedule. The stall watchdog keeps watching real time.</para>
/// <para>Timers created directly on this provider (<c>Task.Delay(delay, clock)</c>, <c>CreateTimer</c>) fire on the thread that
/// advances the clock, with no <see cref="SynchronizationContext"/>, in the <see cref="ExecutionContext"/> captured when the timer was
/// created (as a system timer's callback runs on a thread-pool thread). An exception escaping one goes to the caller of
/// <see cref="Advance"/>; when the loop advanced the clock, the context faults with it. The clock's timestamps are UTC ticks
/// (<see cref="TimestampFrequency"/> is <see cref="TimeSpan.TicksPerSecond"/>), so durations are exact to 100 ns.</para>
/// <para>Thread safety: every member may be called from any thread; the clock never moves backwards.</para>
/// </remarks>
public sealed class VirtualTimeProvider : TimeProvider
{
    /// <summary>The default start: 2000-01-01 00:00:00 UTC (as <c>FakeTimeProvider</c>'s).</summary>
    public static readonly DateTimeOffset DefaultStart = new(2000, 1, 1, 0, 0, 0, TimeSpan.Zero);

    // The range TimeProvider.System accepts for a due time or period, 0 to 0xFFFFFFFE ms (or Timeout.Infinite); kept to the tick here.
    private const long MaxSupportedMilliseconds = 0xFFFFFFFE;

    private readonly object _lock = new();
    private readonly SortedSet<VirtualTimer> _armed = new(TimerOrder.Instance);
    private readonly DateTimeOffset _start;
    private long _now; // UTC ticks; written under _lock, read without it
    private long _sequence;
    private int _holds;
    private PriorityContext? _loop; // the loop this clock drives ([V-ADVANCE]), under _lock

    /// <summary>Creates a clock at <see cref="DefaultStart"/>.</summary>
    public VirtualTimeProvider()
        : this(DefaultStart)
    {
    }

    /// <summary>Creates a clock at <paramref name="start"/>.</summary>
    /// <param name="start">The clock's first <see cref="GetUtcNow"/>.</param>
    public VirtualTimeProvider(DateTimeOffset start)
    {
        _start = start.ToUniversalTime();
        _now = _start.UtcTicks;
    }

    /// <summary>Gets the time the clock started at.</summary>
    public DateTimeOffset Start => _start;

    /// <summary>Gets how far the clock has moved since <see cref="Start"/>.</summary>
    public TimeSpan Elapsed => TimeSpan.FromTicks(Interlocked.Read(ref _now) - _start.UtcTicks);

    /// <summary>Gets <see cref="TimeSpan.TicksPerSecond"/>: a timestamp is a count of 100 ns ticks.</summary>
    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    /// <summary>Gets UTC: virtual time has no daylight saving to trip over.</summary>
    public override TimeZoneInfo LocalTimeZone => TimeZoneInfo.Utc;

    /// <summary>Gets the clock's current time.</summary>
    public override DateTimeOffset GetUtcNow() => new(Interlocked.Read(ref _now), TimeSpan.Zero);

    /// <summary>Gets the clock's current time in ticks of <see cref="TimestampFrequency"/>.</summary>
    public override long GetTimestamp() => Interlocked.Read(ref _now);

    /// <summary>
    /// Moves the clock on by <paramref name="delta"/>, firing on the calling thread every timer that comes due on the way, in due order
    /// (ties in arming order), each with the clock at its due time; a periodic timer fires once per period it passes.
    /// </summary>
    /// <param name="delta">How far to move; <see cref="TimeSpan.Zero"/> fires only the timers already due.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delta"/> is negative.</exception>
    /// <remarks>Called by code on the loop, it stands for CPU work: the loop runs nothing else meanwhile, and queues the firings of
    /// its timers that came due before its next item. An exception escaping a timer's callback propagates here; the clock then stands
    /// at that timer's due time, and the rest of the way is left for the next call.</remarks>
    public void Advance(TimeSpan delta)
    {
        if (delta < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(delta), delta, "A VirtualTimeProvider moves forwards only: the delta must be zero or positive.");
        }

        long target;
        lock (_lock)
        {
            target = _now + delta.Ticks;
        }

        AdvanceTo(target);
    }

    /// <summary>
    /// Holds the loop's automatic advance until the returned object is disposed: while any hold is active, an idle loop waits (in real
    /// time) for work instead of jumping the clock. Take it around work the loop awaits that runs elsewhere (a thread-pool task, real
    /// I/O, a post another thread is about to make), so that it arrives at the virtual time it started at ([V-BLIND]).
    /// </summary>
    /// <returns>The hold; disposing it more than once has no further effect. <see cref="Advance"/> still moves the clock while held.</returns>
    public IDisposable HoldAutoAdvance()
    {
        lock (_lock)
        {
            _holds++;
        }

        return new Hold(this);
    }

    /// <summary>Creates a timer on this clock; its callback runs on the thread that advances the clock past its due time.</summary>
    /// <param name="callback">The callback.</param>
    /// <param name="state">The callback's argument.</param>
    /// <param name="dueTime">When it first fires, from now; <see cref="Timeout.InfiniteTimeSpan"/>: not armed.</param>
    /// <param name="period">The time between firings; <see cref="Timeout.InfiniteTimeSpan"/> or zero: it fires once.</param>
    /// <returns>The timer.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="callback"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="dueTime"/> or <paramref name="period"/> is below -1 ms or above
    /// 4294967294 ms (as for <see cref="TimeProvider.System"/>).</exception>
    /// <remarks>A timer due now (a zero due time) fires at the clock's next advance, by <see cref="Advance"/> or by its loop, without
    /// the clock moving: never inside this call.</remarks>
    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        var timer = new VirtualTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    /// <summary>Describes the clock: its time and how far it has moved.</summary>
    public override string ToString() =>
        string.Create(CultureInfo.InvariantCulture, $"VirtualTimeProvider at {GetUtcNow():yyyy-MM-ddTHH:mm:ss.fffffffZ} (+{Elapsed})");

    /// <summary>
    /// A context being created with <paramref name="provider"/> as its TimeProvider: if it is a virtual clock, the context drives it
    /// from now on. Throws if another context that has not finished drives it.
    /// </summary>
    /// <returns>The virtual clock, or <see langword="null"/> for any other provider.</returns>
    internal static VirtualTimeProvider? AttachLoop(TimeProvider provider, PriorityContext context)
    {
        if (provider is not VirtualTimeProvider clock)
        {
            return null;
        }

        lock (clock._lock)
        {
            if (clock._loop is { IsFinished: false } other)
            {
#pragma warning disable CA2208 // The bad value is the options' TimeProvider property: the exception names it.
                throw new ArgumentException(
                    $"PriorityContextOptions.TimeProvider ({clock}) already drives the loop of {other.Subject} ({other.State}), " +
                    $"so it cannot drive {context.Subject} too: a VirtualTimeProvider is advanced by one loop at a time, since each loop would move " +
                    "it while the other is busy. Give each context a VirtualTimeProvider of its own, or create this one after the other has finished.",
                    "TimeProvider");
#pragma warning restore CA2208
            }

            clock._loop = context;
        }

        return clock;
    }

    /// <summary>
    /// The loop's idle advance ([V-ADVANCE]), on the loop thread, from Park, after the parking fence and the re-check found nothing to run: moves
    /// the clock to the earliest due time of its armed timers (if later than now) and fires every timer due then.
    /// </summary>
    /// <returns><see langword="false"/> when a hold is active or no timer is armed: the loop then waits for a post or a wake.</returns>
    internal bool TryAdvanceIdle()
    {
        long target;
        lock (_lock)
        {
            if (_holds > 0 || _armed.Min is not { } earliest)
            {
                return false;
            }

            target = Math.Max(_now, earliest.Due);
        }

        AdvanceTo(target);
        return true;
    }

    /// <summary>Moves the clock to <paramref name="target"/>, firing the timers due on the way, one at a time, outside the lock.</summary>
    private void AdvanceTo(long target)
    {
        while (true)
        {
            VirtualTimer? due;
            lock (_lock)
            {
                if (_armed.Min is { } earliest && earliest.Due <= target)
                {
                    _armed.Remove(earliest);
                    if (earliest.Due > _now)
                    {
                        Interlocked.Exchange(ref _now, earliest.Due);
                    }

                    if (earliest.Period > 0)
                    {
                        earliest.Due += earliest.Period;
                        earliest.Sequence = ++_sequence;
                        _armed.Add(earliest);
                    }
                    else
                    {
                        earliest.IsArmed = false;
                    }

                    due = earliest;
                }
                else
                {
                    if (target > _now)
                    {
                        Interlocked.Exchange(ref _now, target);
                    }

                    return;
                }
            }

            due.Fire();
        }
    }

    /// <summary>Arms (<paramref name="dueTicks"/> from now), disarms (-1) or disposes a timer, then wakes the loop if it is parked:
    /// an idle loop waiting with nothing armed may now have a timer to jump to ([V-WAKE]).</summary>
    private bool Change(VirtualTimer timer, long dueTicks, long periodTicks, bool disposing)
    {
        PriorityContext? loop;
        lock (_lock)
        {
            if (timer.IsDisposed)
            {
                return disposing; // Change on a disposed timer: false, as for the system timers
            }

            if (timer.IsArmed)
            {
                _armed.Remove(timer);
                timer.IsArmed = false;
            }

            if (disposing)
            {
                timer.IsDisposed = true;
                return true;
            }

            if (dueTicks >= 0)
            {
                timer.Due = _now + dueTicks;
                timer.Period = periodTicks > 0 ? periodTicks : 0;
                timer.Sequence = ++_sequence;
                timer.IsArmed = true;
                _armed.Add(timer);
            }

            loop = _loop;
        }

        loop?.WakeForVirtualClock();
        return true;
    }

    private void ReleaseHold()
    {
        PriorityContext? loop;
        lock (_lock)
        {
            _holds--;
            if (_holds > 0)
            {
                return;
            }

            loop = _loop;
        }

        loop?.WakeForVirtualClock(); // the loop may have parked because of the hold: it may jump now
    }

    /// <summary>Validates a due time or period as <see cref="TimeProvider.System"/> does; returns ticks, or -1 for infinite.</summary>
    private static long ToTicks(TimeSpan value, string paramName)
    {
        if (value == Timeout.InfiniteTimeSpan)
        {
            return -1;
        }

        if (value < TimeSpan.Zero || value > TimeSpan.FromMilliseconds(MaxSupportedMilliseconds))
        {
            throw new ArgumentOutOfRangeException(
                paramName,
                value,
                $"The {paramName} of a VirtualTimeProvider timer must be between 0 and {MaxSupportedMilliseconds} ms, or Timeout.InfiniteTimeSpan (as for TimeProvider.System).");
        }

        return value.Ticks;
    }

    /// <summary>A timer of the clock. Its fields other than the callback are guarded by the clock's lock.</summary>
    private sealed class VirtualTimer(VirtualTimeProvider clock, TimerCallback callback, object? state) : ITimer
    {
        private static readonly ContextCallback s_runInContext = static s => ((VirtualTimer)s!).Invoke();

        private readonly ExecutionContext? _executionContext = ExecutionContext.Capture(); // null when flow is suppressed, as for system timers

        public long Due { get; set; }

        public long Period { get; set; }

        public long Sequence { get; set; }

        public bool IsArmed { get; set; }

        public bool IsDisposed { get; set; }

        public bool Change(TimeSpan dueTime, TimeSpan period) =>
            clock.Change(this, ToTicks(dueTime, nameof(dueTime)), ToTicks(period, nameof(period)), disposing: false);

        public void Dispose() => clock.Change(this, -1, -1, disposing: true);

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }

        /// <summary>Runs the callback as a thread-pool thread would: no SynchronizationContext (nothing inlines onto a loop that
        /// happens to advance the clock), in the ExecutionContext captured at creation.</summary>
        public void Fire()
        {
            SynchronizationContext? current = SynchronizationContext.Current;
            if (current is not null)
            {
                SynchronizationContext.SetSynchronizationContext(null);
            }

            try
            {
                if (_executionContext is null)
                {
                    Invoke();
                }
                else
                {
                    ExecutionContext.Run(_executionContext, s_runInContext, this);
                }
            }
            finally
            {
                if (current is not null)
                {
                    SynchronizationContext.SetSynchronizationContext(current);
                }
            }
        }

        private void Invoke() => callback(state);
    }

    private sealed class Hold(VirtualTimeProvider clock) : IDisposable
    {
        private int _released;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _released, 1) == 0)
            {
                clock.ReleaseHold();
            }
        }
    }

    /// <summary>Due time, then arming order: the order timers fire in.</summary>
    private sealed class TimerOrder : IComparer<VirtualTimer>
    {
        public static readonly TimerOrder Instance = new();

        public int Compare(VirtualTimer? x, VirtualTimer? y)
        {
            int byDue = x!.Due.CompareTo(y!.Due);
            return byDue != 0 ? byDue : x.Sequence.CompareTo(y.Sequence);
        }
    }
}
