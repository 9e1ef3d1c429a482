using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The <see cref="TimeProvider"/> of a priority scheduler: timers kept by the scheduler; its clock is the system's, or, when the options gave
/// another <see cref="TimeProvider"/>, that provider's (<see cref="Create"/>).
/// </summary>
internal class LoopTimeProvider : TimeProvider
{
    // What TimeProvider.System accepts: whole milliseconds from -1 (Timeout.Infinite) to 0xFFFFFFFE.
    private const long MaxSupportedMilliseconds = 0xFFFFFFFE;

    private readonly LoopTimers _timers;
    private readonly int _level; // -1: the level current on the creating thread, else DefaultLevel

    protected LoopTimeProvider(LoopTimers timers, int level)
    {
        _timers = timers;
        _level = level;
    }

    /// <summary>The provider for <paramref name="level"/> (-1: the creating code's level): the system clock's own members, untouched,
    /// unless the scheduler runs its timers on another clock.</summary>
    public static LoopTimeProvider Create(LoopTimers timers, int level) =>
        timers.Clock is { } clock ? new OnClock(timers, level, clock) : new LoopTimeProvider(timers, level);

    /// <summary>The provider of <paramref name="level"/> cached in <paramref name="cache"/> (one slot per level), created on first
    /// use: the implementation of both schedulers' <c>GetTimeProvider(level)</c>.</summary>
    /// <remarks>From any thread: racing creators publish one instance with a compare-exchange and every caller returns that one.</remarks>
    public static LoopTimeProvider GetOrCreate(LoopTimeProvider?[] cache, LoopTimers timers, int level)
    {
        LoopTimeProvider? provider = Volatile.Read(ref cache[level]);
        if (provider is null)
        {
            Interlocked.CompareExchange(ref cache[level], Create(timers, level), null);
            provider = cache[level]!;
        }

        return provider;
    }

    /// <summary>Creates a timer kept by the scheduler; see <see cref="PriorityScheduler.TimeProvider"/>.</summary>
    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        long due = ValidateAndConvert(dueTime, nameof(dueTime), _timers);
        long periodTicks = ValidateAndConvert(period, nameof(period), _timers);
        int level = _level >= 0 ? _level : _timers.Host.CreatingLevel();
        var timer = new LoopTimer(_timers, level, callback, state, _level >= 0 ? null : _timers.Host.CreatingFlow());
        if (!_timers.ArmTimer(timer, due, periodTicks, disposing: false))
        {
            throw _timers.ClosedException();
        }

        return timer;
    }

    public override string ToString() => _level >= 0 ? $"TimeProvider of {_timers.Host.Name} at level {_level}" : $"TimeProvider of {_timers.Host.Name}";

    /// <summary>
    /// Validates a due time or period the way <see cref="TimeProvider.System"/> does (same exception type and parameter name), and
    /// converts it to Stopwatch ticks; -1 stands for <see cref="Timeout.InfiniteTimeSpan"/>.
    /// </summary>
    internal static long ValidateAndConvert(TimeSpan value, string paramName, LoopTimers timers)
    {
        long ms = (long)value.TotalMilliseconds;
        if (ms < -1 || ms > MaxSupportedMilliseconds)
        {
            throw new ArgumentOutOfRangeException(
                paramName,
                value,
                $"The {paramName} of a timer of {timers.Host.Subject} must be between 0 and {MaxSupportedMilliseconds} ms, or Timeout.InfiniteTimeSpan (as for TimeProvider.System).");
        }

        return ms == -1 ? -1 : timers.Ticks(value);
    }

    internal static long ToStopwatchTicks(TimeSpan value) =>
        value <= TimeSpan.Zero ? 0 : (long)(value.Ticks * ((double)Stopwatch.Frequency / TimeSpan.TicksPerSecond));

    /// <summary>A scheduler's provider when its timers run on another clock: every clock member is that clock's.</summary>
    private sealed class OnClock(LoopTimers timers, int level, TimeProvider clock) : LoopTimeProvider(timers, level)
    {
        public override long TimestampFrequency => clock.TimestampFrequency;

        public override TimeZoneInfo LocalTimeZone => clock.LocalTimeZone;

        public override long GetTimestamp() => clock.GetTimestamp();

        public override DateTimeOffset GetUtcNow() => clock.GetUtcNow();
    }
}
