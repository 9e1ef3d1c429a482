using System;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>Settings for a <see cref="PriorityContext"/>. Validated when the context is created.</summary>
/// <remarks>The context copies the values it needs when it is created; changing the options afterwards has no effect.</remarks>
public sealed class PriorityContextOptions
{
    private PriorityPolicy _policy = PriorityPolicy.Strict;
    private TimeProvider _timeProvider = TimeProvider.System;

    /// <summary>The smallest allowed value of <see cref="Levels"/>.</summary>
    public const int MinLevels = 1;

    /// <summary>The largest allowed value of <see cref="Levels"/>.</summary>
    public const int MaxLevels = 64;

    /// <summary>The largest allowed value of <see cref="IdleSpinCount"/>.</summary>
    public const int MaxIdleSpinCount = 10_000;

    /// <summary>
    /// The default value of <see cref="StallTimeout"/>: 10 seconds, in the core and in the hosting package alike. Long enough that no
    /// item a loop should run (a CPU part between two awaits, a checkpointed computation) is mistaken for a hang, as Orleans warns of a
    /// queue delay at 10 s; short enough that a blocked loop is reported well before the leases it holds run out (30 s is common) and
    /// long before anyone would look for it. Checked every 2.5 s on a dedicated thread: measured at 70 to 145 ms of CPU an hour per
    /// context (0.002% to 0.004% of one core), whether its loop is idle or busy (docs/benchmarks.md, "The stall watchdog").
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

    /// <summary>The default value of <see cref="TimeSlice"/>: 20 milliseconds; its watcher costs about 1% of a core
    /// while a loop is busy on the machine it was measured on (docs/benchmarks.md, "Checkpoints").</summary>
    public static readonly TimeSpan DefaultTimeSlice = TimeSpan.FromMilliseconds(20);

    /// <summary>
    /// Gets or sets the number of priority levels. Levels are numbered <c>0</c> to <c>Levels - 1</c>; a higher number runs first.
    /// </summary>
    /// <value>The default value is 3. Allowed: 1 to 64.</value>
    public int Levels { get; set; } = 3;

    /// <summary>
    /// Gets or sets the level at which the entry point of <see cref="PriorityContext.Run(Func{System.Threading.Tasks.Task}, PriorityContextOptions?)"/> starts.
    /// </summary>
    /// <value>The default value is 0, the lowest level. Allowed: 0 to <c>Levels - 1</c>.</value>
    public int DefaultLevel { get; set; }

    /// <summary>Gets or sets a name for diagnostics; <see cref="PriorityContextThread"/> also names its thread with it.</summary>
    /// <value>The default value is <see langword="null"/> (the context is called "PriorityContext"). Any other string is used as
    /// given, the empty string included.</value>
    public string? Name { get; set; }

    /// <summary>
    /// Gets or sets how many times the idle loop checks for new work, spinning briefly between checks, before it parks its thread.
    /// Spinning shortens the wake-up after a short idle gap; parking costs no CPU while idle. 0 parks at once.
    /// </summary>
    /// <value>The default value is 20 (a few microseconds). Allowed: 0 to 10,000.</value>
    public int IdleSpinCount { get; set; } = 20;

    /// <summary>
    /// Gets or sets how long the loop may go without starting an item while work is waiting before
    /// <see cref="PriorityContext.StallDetected"/> is raised (and the stall is recorded on the <c>PriorityAsync</c> meter).
    /// <see langword="null"/> turns the watchdog off.
    /// </summary>
    /// <remarks>The watchdog costs nothing per item: a dedicated thread (never the thread pool) checks the loop's dispatch counter, its
    /// queues and its overdue timers every quarter of this time. A stall is reported between 1 and 1.5 times this value after the loop
    /// stopped starting items. See docs/reliability.md.</remarks>
    /// <value>The default value is <see cref="DefaultStallTimeout"/> (10 seconds). Allowed: <see langword="null"/> (off), or from
    /// <see cref="MinStallTimeout"/> (10 ms) to <see cref="MaxStallTimeout"/> (1 day).</value>
    public TimeSpan? StallTimeout { get; set; } = DefaultStallTimeout;

    /// <summary>
    /// Gets or sets the time quota of one item: once the running item has run this long and other work is waiting,
    /// <see cref="Priority.Checkpoint"/> and <see cref="Priority.ShouldYield"/> ask it to yield (the rest of the method goes to the back of
    /// its level). <see langword="null"/> turns the quota off: a checkpoint then yields only to work waiting at a higher level.
    /// </summary>
    /// <remarks>The quota costs nothing per item or per checkpoint, and nothing on the wake-up of a parked loop: a process-wide timer
    /// thread watches each busy loop's dispatch counter every quarter of the slice (at least every millisecond) and raises a flag once the
    /// same item has been running for a whole slice while work may be waiting, so an item is told to yield between 1 and about 1.5 slices
    /// after it started (if work is waiting by then; else within a quarter slice, at least 1 ms, after work is queued). The timer thread
    /// sleeps while every loop is parked; the first checkpoint after that wakes it, and an item that started meanwhile is counted from
    /// that checkpoint. On a <see cref="VirtualTimeProvider"/> the quota is off: it measures real run time, which virtual time cannot tell.</remarks>
    /// <value>The default value is <see cref="DefaultTimeSlice"/> (20 ms). Allowed: <see langword="null"/>, or from
    /// <see cref="MinTimeSlice"/> (1 ms) to <see cref="MaxTimeSlice"/> (1 minute).</value>
    public TimeSpan? TimeSlice { get; set; } = DefaultTimeSlice;

    /// <summary>For tests: the time quota is not watched by the process-wide timer thread; tests drive it through
    /// <c>PriorityContext.TickTimeSlice</c> with made-up timestamps.</summary>
    internal bool TimeSliceDrivenByTests { get; set; }

    /// <summary>
    /// Gets or sets how the loop chooses between levels: <see cref="PriorityPolicy.Strict"/>, <see cref="PriorityPolicy.Aging(TimeSpan[])"/>
    /// (a maximum wait per level) or <see cref="PriorityPolicy.WeightedShares(int[])"/> (run time in proportion to shares). See
    /// docs/concepts.md, "Policies".
    /// </summary>
    /// <value>The default value is <see cref="PriorityPolicy.Strict"/>. A policy with values per level must give exactly
    /// <see cref="Levels"/> of them.</value>
    /// <exception cref="ArgumentNullException">The value is <see langword="null"/>.</exception>
    public PriorityPolicy Policy
    {
        get => _policy;
        set => _policy = value ?? throw new ArgumentNullException(nameof(value), "PriorityContextOptions.Policy cannot be null; the default is PriorityPolicy.Strict.");
    }

    /// <summary>
    /// Gets or sets the clock and timers the context's loop timers run on: <see cref="Priority.Delay"/> and the timers of
    /// <see cref="PriorityContext.TimeProvider"/> and <see cref="PriorityContext.GetTimeProvider(int)"/>, whose clock it also becomes.
    /// Give a test's <c>FakeTimeProvider</c> (Microsoft.Extensions.TimeProvider.Testing) so that advancing it fires them, on the loop,
    /// in due order, without waiting for real time to pass (docs/testing.md).
    /// </summary>
    /// <remarks>
    /// <para>With <see cref="System.TimeProvider.System"/> the loop reads <see cref="System.Diagnostics.Stopwatch"/> and is woken by
    /// its own timed wait or the process-wide alarm thread, exactly as without this option. With any other provider the context
    /// creates one timer of that provider when it is created, points it at its earliest loop timer, and reads the provider's
    /// <see cref="System.TimeProvider.GetTimestamp"/> to decide what is due: when the provider's timer fires (for a
    /// <c>FakeTimeProvider</c>, inside <c>Advance</c> or <c>SetUtcNow</c>), the loop queues the firing of every loop timer now due, in
    /// due order, each at its level.</para>
    /// <para>The time quota (<see cref="TimeSlice"/>) and the stall watchdog keep measuring real time: they watch the loop thread,
    /// not the code's waits.</para>
    /// <para>A <see cref="VirtualTimeProvider"/> goes further: the loop advances it itself, to its earliest timer, whenever it has
    /// nothing to run, so a test needs no thread to move the clock; the policies and instruments read it too, and the time quota is
    /// off (see <see cref="VirtualTimeProvider"/>).</para>
    /// <para>A provider that throws (from <see cref="System.TimeProvider.GetTimestamp"/> or its timer's <see cref="System.Threading.ITimer.Change"/>)
    /// as the loop fires its timers faults the context with that exception, as an exception escaping a callback does, but without
    /// raising <see cref="PriorityContext.UnhandledException"/> (no handler may mark it handled: the loop could no longer fire its
    /// timers). A call that arms a timer (<see cref="Priority.Delay"/>, <c>CreateTimer</c>, <see cref="System.Threading.ITimer.Change"/>) gets the
    /// exception and arms nothing; disarming (<see cref="IDisposable.Dispose"/>, a cancellation) never throws it.</para>
    /// </remarks>
    /// <value>The default value is <see cref="System.TimeProvider.System"/>.</value>
    /// <exception cref="ArgumentNullException">The value is <see langword="null"/>.</exception>
    public TimeProvider TimeProvider
    {
        get => _timeProvider;
        set => _timeProvider = value ?? throw new ArgumentNullException(nameof(value), "PriorityContextOptions.TimeProvider cannot be null; the default is TimeProvider.System.");
    }

    /// <summary>For tests: the clock of the timing instruments and the trace recorder; <see langword="null"/> is <see cref="System.Diagnostics.Stopwatch"/>.</summary>
    internal TimeProvider? Clock { get; set; }

    internal void Validate()
    {
        ValidateShared(nameof(PriorityContextOptions), Levels, DefaultLevel, IdleSpinCount, StallTimeout, TimeSlice, Policy);
    }

    /// <summary>The checks of the options both schedulers take (this class and <see cref="PriorityThreadPoolOptions"/>): each bad value
    /// throws <see cref="ArgumentOutOfRangeException"/> naming the option (as <paramref name="kind"/>.Name), the value and the range.</summary>
    internal static void ValidateShared(string kind, int levels, int defaultLevel, int idleSpinCount, TimeSpan? stallTimeout, TimeSpan? timeSlice, PriorityPolicy policy)
    {
        if (levels is < MinLevels or > MaxLevels)
        {
            throw OutOfRange(nameof(Levels), levels, $"{kind}.Levels must be between {MinLevels} and {MaxLevels}.");
        }

        if (defaultLevel < 0 || defaultLevel >= levels)
        {
            throw OutOfRange(nameof(DefaultLevel), defaultLevel, $"{kind}.DefaultLevel must be between 0 and {levels - 1} (Levels is {levels}).");
        }

        if (idleSpinCount is < 0 or > MaxIdleSpinCount)
        {
            throw OutOfRange(nameof(IdleSpinCount), idleSpinCount, $"{kind}.IdleSpinCount must be between 0 and {MaxIdleSpinCount}.");
        }

        if (stallTimeout is { } timeout && (timeout < MinStallTimeout || timeout > MaxStallTimeout))
        {
            throw OutOfRange(nameof(StallTimeout), timeout, $"{kind}.StallTimeout must be null (off) or between {MinStallTimeout} and {MaxStallTimeout}.");
        }

        TimeSliceOption.Validate(timeSlice, kind, nameof(TimeSlice));

        (int count, string what) = policy.PerLevelValues;
        if (count != 0 && count != levels)
        {
            throw OutOfRange(nameof(Policy), count, $"{kind}.Policy ({policy}) gives {count} {what}; exactly one per level is needed: {levels} (Levels is {levels}).");
        }
    }

    // The option's name is the exception's parameter name, as when a property's own check throws.
    private static ArgumentOutOfRangeException OutOfRange(string option, object value, string message) => new(option, value, message);
}
