using System;
using System.Collections.Generic;
using System.Globalization;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>The settings every priority scheduler takes: <see cref="PriorityContextOptions"/> and <see cref="PriorityThreadPoolOptions"/>
/// derive from it (and the hosting package's worker options). Validated when a scheduler is created; <see cref="Validate"/> checks
/// them without creating one.</summary>
/// <remarks>A scheduler copies the values it needs when it is created; changing the options afterwards has no effect.</remarks>
public abstract class PrioritySchedulerOptions
{
    /// <summary>The smallest allowed value of <see cref="Levels"/>.</summary>
    public const int MinLevels = 1;

    /// <summary>The largest allowed value of <see cref="Levels"/>.</summary>
    public const int MaxLevels = 64;

    /// <summary>The largest allowed value of <see cref="IdleSpinCount"/>.</summary>
    public const int MaxIdleSpinCount = 10_000;

    /// <summary>
    /// The default value of <see cref="StallTimeout"/>: 10 seconds. Long enough that no item a scheduler should run (a CPU part between
    /// two awaits, a checkpointed computation) is mistaken for a hang, as Orleans warns of a queue delay at 10 s; short enough that a
    /// blocked loop is reported well before the leases it holds run out (30 s is common). Checked every 2.5 s on a dedicated thread:
    /// 70 to 145 ms of CPU an hour per scheduler thread (docs/benchmarks.md, "The stall watchdog").
    /// </summary>
    public static readonly TimeSpan DefaultStallTimeout = TimeSpan.FromSeconds(10);

    /// <summary>The smallest allowed value of <see cref="StallTimeout"/>: 10 milliseconds.</summary>
    public static readonly TimeSpan MinStallTimeout = TimeSpan.FromMilliseconds(10);

    /// <summary>The largest allowed value of <see cref="StallTimeout"/>: one day.</summary>
    public static readonly TimeSpan MaxStallTimeout = TimeSpan.FromDays(1);

    /// <summary>The smallest allowed value of <see cref="TimeSlice"/>: 1 millisecond (the resolution of the timer that watches it).</summary>
    public static readonly TimeSpan MinTimeSlice = TimeSpan.FromMilliseconds(1);

    /// <summary>The largest allowed value of <see cref="TimeSlice"/>: 1 minute.</summary>
    public static readonly TimeSpan MaxTimeSlice = TimeSpan.FromMinutes(1);

    /// <summary>The default value of <see cref="TimeSlice"/>: 20 milliseconds; its watcher costs about 1% of a core while a scheduler is
    /// busy (docs/benchmarks.md, "Checkpoints").</summary>
    public static readonly TimeSpan DefaultTimeSlice = TimeSpan.FromMilliseconds(20);

    private PriorityPolicy _policy = PriorityPolicy.Strict;
    private TimeProvider _timeProvider = TimeProvider.System;

    /// <summary>Initializes the settings with their defaults.</summary>
    protected PrioritySchedulerOptions()
    {
    }

    /// <summary>Gets or sets the number of priority levels. Levels are numbered <c>0</c> to <c>Levels - 1</c>; a higher number runs first.</summary>
    /// <value>The default value is 3. Allowed: <see cref="MinLevels"/> (1) to <see cref="MaxLevels"/> (64).</value>
    public int Levels { get; set; } = 3;

    /// <summary>Gets or sets the level an entry point (<c>PriorityContext.Run</c>, a hosted worker's <c>ExecuteAsync</c>) and
    /// <c>InvokeAsync</c> without a level start at.</summary>
    /// <value>The default value is 0, the lowest level. Allowed: 0 to <c>Levels - 1</c>.</value>
    public int DefaultLevel { get; set; }

    /// <summary>Gets or sets a name for diagnostics (messages, the metrics' <c>priorityasync.context</c> tag, thread names).</summary>
    /// <value>The default value is <see langword="null"/>: the scheduler is called by its kind ("PriorityContext", "PriorityThreadPool").
    /// Any other string is used as given, the empty string included.</value>
    public string? Name { get; set; }

    /// <summary>Gets or sets how many times an idle thread checks for new work, spinning briefly between checks, before it parks.
    /// Spinning shortens the wake-up after a short idle gap; parking costs no CPU while idle. 0 parks at once.</summary>
    /// <value>The default value is 20 (a few microseconds). Allowed: 0 to <see cref="MaxIdleSpinCount"/> (10,000).</value>
    public int IdleSpinCount { get; set; } = 20;

    /// <summary>
    /// Gets or sets how long a thread of the scheduler may go without starting an item while work is waiting before
    /// <see cref="PriorityScheduler.StallDetected"/> is raised (and the stall recorded on the <c>PriorityAsync</c> meter).
    /// <see langword="null"/> turns the watchdog off.
    /// </summary>
    /// <remarks>The watchdog costs nothing per item: a dedicated thread (never the thread pool) checks each scheduler thread's dispatch
    /// counter, the queues and the overdue timers every quarter of this time, so one blocked thread of a pool is reported even while
    /// the others keep it moving. A stall is reported between 1 and 1.5 times this value after the thread stopped starting items.</remarks>
    /// <value>The default value is <see cref="DefaultStallTimeout"/> (10 seconds). Allowed: <see langword="null"/> (off), or from
    /// <see cref="MinStallTimeout"/> (10 ms) to <see cref="MaxStallTimeout"/> (1 day).</value>
    public TimeSpan? StallTimeout { get; set; } = DefaultStallTimeout;

    /// <summary>
    /// Gets or sets the time quota of one item: once the running item has run this long and other work is waiting for it,
    /// <see cref="Priority.Checkpoint"/> and <see cref="Priority.ShouldYield"/> ask it to yield (the rest of the method goes to the back
    /// of its level). <see langword="null"/> turns the quota off: a checkpoint then yields only to work waiting at a higher level.
    /// </summary>
    /// <remarks>
    /// <para>The quota costs nothing per item or per checkpoint: a process-wide timer thread watches each busy thread's dispatch
    /// counter every quarter of the slice (at least every millisecond) and raises a flag once the same item has run a whole slice
    /// while work may be waiting, so an item is told to yield between 1 and about 1.5 slices after it started (if work is waiting by
    /// then; else within a quarter slice after work is queued). The timer thread sleeps while every scheduler thread is parked.</para>
    /// <para>On a pool the quota is per thread, and an item over its quota yields only when its yield is what lets waiting work run:
    /// work waits while every thread runs an item, or work waits at the item's own level while that level is at its cap.</para>
    /// </remarks>
    /// <value>The default value is <see cref="DefaultTimeSlice"/> (20 ms). Allowed: <see langword="null"/>, or from
    /// <see cref="MinTimeSlice"/> (1 ms) to <see cref="MaxTimeSlice"/> (1 minute).</value>
    public TimeSpan? TimeSlice { get; set; } = DefaultTimeSlice;

    /// <summary>
    /// Gets or sets how the scheduler chooses between levels: <see cref="PriorityPolicy.Strict"/>, <see cref="PriorityPolicy.Aging(TimeSpan[])"/>
    /// (a maximum wait per level) or <see cref="PriorityPolicy.WeightedShares(int[])"/> (run time in proportion to shares). See
    /// docs/concepts.md, "Policies".
    /// </summary>
    /// <value>The default value is <see cref="PriorityPolicy.Strict"/>. A policy with values per level must give exactly
    /// <see cref="Levels"/> of them.</value>
    /// <exception cref="ArgumentNullException">The value is <see langword="null"/>.</exception>
    public PriorityPolicy Policy
    {
        get => _policy;
        set => _policy = value ?? throw new ArgumentNullException(nameof(value), $"{GetType().Name}.Policy cannot be null; the default is PriorityPolicy.Strict.");
    }

    /// <summary>
    /// Gets or sets the clock and timers the scheduler's own timers run on: <see cref="Priority.Delay"/> and the timers of
    /// <see cref="PriorityScheduler.TimeProvider"/> and <see cref="PriorityScheduler.GetTimeProvider(int)"/>, whose clock it also
    /// becomes. Give a test's <c>FakeTimeProvider</c> (Microsoft.Extensions.TimeProvider.Testing) so that advancing it fires them, on
    /// the scheduler, in due order, without waiting for real time to pass (docs/testing.md).
    /// </summary>
    /// <remarks>
    /// <para>With <see cref="System.TimeProvider.System"/> the scheduler reads <see cref="System.Diagnostics.Stopwatch"/> and is woken
    /// by its own timed wait or the process-wide alarm thread. With any other provider it creates one timer of that provider, points it
    /// at its earliest timer, and reads the provider's <see cref="System.TimeProvider.GetTimestamp"/> to decide what is due.</para>
    /// <para>The time quota (<see cref="TimeSlice"/>) and the stall watchdog keep measuring real time: they watch the threads, not the
    /// code's waits.</para>
    /// <para>A provider that throws as the scheduler fires its timers faults the scheduler with that exception, without raising
    /// <see cref="PriorityScheduler.UnhandledException"/> (no handler may mark it handled: the timers could no longer fire). A call that
    /// arms a timer gets the exception and arms nothing; disarming never throws it.</para>
    /// </remarks>
    /// <value>The default value is <see cref="System.TimeProvider.System"/>.</value>
    /// <exception cref="ArgumentNullException">The value is <see langword="null"/>.</exception>
    public TimeProvider TimeProvider
    {
        get => _timeProvider;
        set => _timeProvider = value ?? throw new ArgumentNullException(nameof(value), $"{GetType().Name}.TimeProvider cannot be null; the default is TimeProvider.System.");
    }

    /// <summary>For tests: the clock of the enqueue stamps, the policies and the timing instruments; null is Stopwatch.</summary>
    internal TimeProvider? Clock { get; set; }

    /// <summary>For tests: a clock only the policies read (a test may shift it ahead of the Stopwatch stamps), over <see cref="Clock"/>.</summary>
    internal TimeProvider? PolicyClock { get; set; }

    /// <summary>For tests: the time quota is not watched by the process-wide timer thread; tests drive it with made-up timestamps.</summary>
    internal bool TimeSliceDrivenByTests { get; set; }

    /// <summary>Checks every setting without creating a scheduler.</summary>
    /// <returns>One message per setting that is out of range, naming the setting, its value and what it must be (for example
    /// "Levels is 0; it must be between 1 and 64."); empty when every setting is valid. A scheduler created with these options throws
    /// <see cref="ArgumentOutOfRangeException"/> for the first one.</returns>
    public IReadOnlyList<string> Validate()
    {
        var errors = new List<OptionError>();
        AddErrors(errors);
        return errors.ConvertAll(error => error.ToString());
    }

    /// <summary>Adds what is wrong with the settings, in the order they are declared.</summary>
    private protected virtual void AddErrors(List<OptionError> errors)
    {
        if (Levels is < MinLevels or > MaxLevels)
        {
            errors.Add(new(nameof(Levels), Levels, $"between {MinLevels} and {MaxLevels}"));
        }
        else if (DefaultLevel < 0 || DefaultLevel >= Levels)
        {
            errors.Add(new(nameof(DefaultLevel), DefaultLevel, $"between 0 and {Levels - 1} (Levels is {Levels})"));
        }

        if (IdleSpinCount is < 0 or > MaxIdleSpinCount)
        {
            errors.Add(new(nameof(IdleSpinCount), IdleSpinCount, $"between 0 and {MaxIdleSpinCount}"));
        }

        if (StallTimeout is { } stall && (stall < MinStallTimeout || stall > MaxStallTimeout))
        {
            errors.Add(new(nameof(StallTimeout), stall, $"null (off) or between {Format(MinStallTimeout)} and {Format(MaxStallTimeout)}"));
        }

        if (TimeSlice is { } slice && (slice < MinTimeSlice || slice > MaxTimeSlice))
        {
            errors.Add(new(nameof(TimeSlice), slice, $"null (no quota) or between {Format(MinTimeSlice)} and {Format(MaxTimeSlice)}"));
        }

        (int count, string what) = Policy.PerLevelValues;
        if (count != 0 && count != Levels && Levels is >= MinLevels and <= MaxLevels)
        {
            errors.Add(new(nameof(Policy), count, $"a policy with one value per level: {Levels} {what} (Levels is {Levels}), not {count}", Policy.ToString()));
        }
    }

    /// <summary>The schedulers' check: the first setting out of range throws, naming the option as the parameter.</summary>
    internal void ThrowIfInvalid()
    {
        var errors = new List<OptionError>();
        AddErrors(errors);
        if (errors.Count > 0)
        {
            OptionError first = errors[0];
            throw new ArgumentOutOfRangeException(first.Option.Split('[')[0], first.Value, $"{GetType().Name}.{first}");
        }
    }

    private protected static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);

    /// <summary>One setting out of range: its name (or path, as "MaxConcurrencyPerLevel:1"), its value and what it must be.</summary>
    /// <param name="Option">The option's name, or its path ("MaxConcurrencyPerLevel[1]").</param>
    /// <param name="Value">The bad value (the exception's ActualValue).</param>
    /// <param name="Requirement">What it must be.</param>
    /// <param name="Display">How the message shows the value, when not as <paramref name="Value"/> itself.</param>
    private protected readonly record struct OptionError(string Option, object Value, string Requirement, string? Display = null)
    {
        public override string ToString() =>
            $"{Option} is {Display ?? (Value is TimeSpan span ? Format(span) : Convert.ToString(Value, CultureInfo.InvariantCulture))}; it must be {Requirement}.";
    }
}
