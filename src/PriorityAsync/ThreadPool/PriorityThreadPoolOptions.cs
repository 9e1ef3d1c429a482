using System;
using System.Collections.Generic;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>Settings for a <see cref="PriorityThreadPool"/>. Validated when the pool is created.</summary>
/// <remarks>The pool copies the values it needs when it is created; changing the options afterwards has no effect.</remarks>
public sealed class PriorityThreadPoolOptions
{
    /// <summary>The largest allowed value of <see cref="ThreadCount"/>.</summary>
    public const int MaxThreadCount = 256;

    private PriorityPolicy _policy = PriorityPolicy.Strict;
    private TimeProvider _timeProvider = TimeProvider.System;

    /// <summary>Gets or sets the number of priority levels; a higher number runs first.</summary>
    /// <value>The default value is 3. Allowed: <see cref="PriorityContextOptions.MinLevels"/> (1) to <see cref="PriorityContextOptions.MaxLevels"/> (64).</value>
    public int Levels { get; set; } = 3;

    /// <summary>Gets or sets the level <see cref="PriorityThreadPool.InvokeAsync(Func{System.Threading.Tasks.Task})"/> without a level starts at.</summary>
    /// <value>The default value is 0, the lowest level. Allowed: 0 to <c>Levels - 1</c>.</value>
    public int DefaultLevel { get; set; }

    /// <summary>Gets or sets the number of dedicated threads that run the pool's work.</summary>
    /// <value>The default value is <see cref="Environment.ProcessorCount"/>. Allowed: 1 to <see cref="MaxThreadCount"/> (256).</value>
    public int ThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>Gets or sets a name for diagnostics; the threads are called "<c>Name</c> #i".</summary>
    /// <value>The default value is <see langword="null"/> (the pool is called "PriorityThreadPool"). Any other string is used as given,
    /// the empty string included (as <see cref="PriorityContextOptions.Name"/>; the threads are then called " #i").</value>
    public string? Name { get; set; }

    /// <summary>Gets or sets how many times an idle thread checks for work, spinning briefly between checks, before it parks.</summary>
    /// <value>The default value is 20. Allowed: 0 to <see cref="PriorityContextOptions.MaxIdleSpinCount"/> (10,000).</value>
    public int IdleSpinCount { get; set; } = 20;

    /// <summary>
    /// Gets or sets how long one of the pool's threads may stay inside one item while work waits before
    /// <see cref="PriorityThreadPool.StallDetected"/> is raised. <see langword="null"/> turns the watchdog off.
    /// </summary>
    /// <remarks>Each thread is watched on its own (a dispatch count per thread): one blocked thread among N is reported even while the
    /// others keep the pool moving. Checked on the process-wide watchdog thread, never the thread pool.</remarks>
    /// <value>The default value is <see cref="PriorityContextOptions.DefaultStallTimeout"/> (10 seconds). Allowed: <see langword="null"/>,
    /// or from <see cref="PriorityContextOptions.MinStallTimeout"/> to <see cref="PriorityContextOptions.MaxStallTimeout"/>.</value>
    public TimeSpan? StallTimeout { get; set; } = PriorityContextOptions.DefaultStallTimeout;

    /// <inheritdoc cref="PriorityContextOptions.TimeSlice" path="/summary"/>
    /// <remarks>
    /// <para>On the pool the quota is per thread: the process-wide timer thread of the quota watches each busy thread's dispatch counter
    /// (nothing is done per item, no clock is read on the dispatch path) and raises that thread's flag once its item has run a whole
    /// slice while work may be waiting; the bounds are those of <see cref="PriorityContextOptions.TimeSlice"/>, per thread.</para>
    /// <para>An item over its quota yields at a checkpoint only when its yield is what lets waiting work run: work waits while every
    /// thread is running an item (no idle thread will take it), or work waits at the item's own level while that level is at its cap
    /// (<see cref="MaxConcurrencyPerLevel"/>). Otherwise another thread runs the waiting work and the item goes on. Work waiting above
    /// the caller's level makes a checkpoint yield whatever the quota, as on a <see cref="PriorityContext"/>.</para>
    /// </remarks>
    /// <value>The default value is <see cref="PriorityContextOptions.DefaultTimeSlice"/> (20 ms). Allowed: <see langword="null"/>, or from
    /// <see cref="PriorityContextOptions.MinTimeSlice"/> (1 ms) to <see cref="PriorityContextOptions.MaxTimeSlice"/> (1 minute).</value>
    public TimeSpan? TimeSlice { get; set; } = PriorityContextOptions.DefaultTimeSlice;

    /// <summary>For tests: the time quota is not watched by the process-wide timer thread; tests drive it through
    /// <c>PriorityThreadPool.TickTimeSlice</c> with made-up timestamps.</summary>
    internal bool TimeSliceDrivenByTests { get; set; }

    /// <summary>For tests: called on the constructing thread before each pool thread starts, with the pool and the thread's index (a
    /// throw there stands for the OS refusing a thread, as a process or container thread limit does). An option, so only the pool
    /// a test creates sees it.</summary>
    internal Action<PriorityThreadPool, int>? ThreadStartingForTests { get; set; }

    /// <summary>For tests: the pool's <c>DequeueObserver</c> and <c>DequeueStarting</c> from its construction, so that no dequeue goes
    /// unobserved (set on the pool after it started, a thread already past its check of the hook dequeues without it).</summary>
    internal (Action<int, object?> Observer, Action? Starting)? DequeueHooksForTests { get; set; }

    /// <summary>For tests: the clock the aging and weighted-shares policies read, or <see langword="null"/> for
    /// <see cref="System.Diagnostics.Stopwatch"/>. The weighted-shares policy reads it only on the thread that runs the item (at the
    /// dequeue and at the item's end), so a clock per thread measures each item's own run time. The aging policy compares it with the
    /// enqueue stamps, which are Stopwatch's: a clock for it must run on Stopwatch's timestamps (a test may shift them).</summary>
    internal TimeProvider? PolicyClock { get; set; }

    /// <summary>Gets or sets how the pool chooses between levels at each dequeue, across all its threads.</summary>
    /// <value>The default value is <see cref="PriorityPolicy.Strict"/>. A policy with values per level must give exactly
    /// <see cref="Levels"/> of them.</value>
    /// <exception cref="ArgumentNullException">The value is <see langword="null"/>.</exception>
    public PriorityPolicy Policy
    {
        get => _policy;
        set => _policy = value ?? throw new ArgumentNullException(nameof(value), "PriorityThreadPoolOptions.Policy cannot be null; the default is PriorityPolicy.Strict.");
    }

    /// <summary>Gets or sets the clock whose timers the pool fires itself (<see cref="Priority.Delay"/>, <see cref="PriorityThreadPool.GetTimeProvider(int)"/>).</summary>
    /// <remarks>As <see cref="PriorityContextOptions.TimeProvider"/>: a provider that throws as the pool fires its timers faults the
    /// pool with that exception (<see cref="PriorityThreadPool.Completion"/>), without raising
    /// <see cref="PriorityThreadPool.UnhandledException"/>; a call that arms a timer gets it and arms nothing.</remarks>
    /// <value>The default value is <see cref="System.TimeProvider.System"/>.</value>
    /// <exception cref="ArgumentNullException">The value is <see langword="null"/>.</exception>
    public TimeProvider TimeProvider
    {
        get => _timeProvider;
        set => _timeProvider = value ?? throw new ArgumentNullException(nameof(value), "PriorityThreadPoolOptions.TimeProvider cannot be null; the default is TimeProvider.System.");
    }

    /// <summary>
    /// Gets or sets the most threads each level may use at once (index L is level L), or <see langword="null"/> for no cap: for
    /// example <c>[ThreadCount - 1, ThreadCount, ThreadCount]</c> keeps one thread free of bulk work (level 0) for urgent work.
    /// </summary>
    /// <remarks>A cap never makes a thread idle while runnable work of another level waits: a thread skips a level at its cap and
    /// takes the best item of the others.</remarks>
    /// <value>The default value is <see langword="null"/>. Otherwise exactly <see cref="Levels"/> values, each from 1 to <see cref="ThreadCount"/>.</value>
    public IReadOnlyList<int>? MaxConcurrencyPerLevel { get; set; }

    internal void Validate()
    {
        PriorityContextOptions.ValidateShared(nameof(PriorityThreadPoolOptions), Levels, DefaultLevel, IdleSpinCount, StallTimeout, TimeSlice, Policy);
        VirtualTimeProvider.ThrowIfOnPool(TimeProvider); // a single loop's clock: the pool cannot tell when it is idle
        if (ThreadCount is < 1 or > MaxThreadCount)
        {
            throw new ArgumentOutOfRangeException(nameof(ThreadCount), ThreadCount, $"PriorityThreadPoolOptions.ThreadCount must be between 1 and {MaxThreadCount}.");
        }

        if (MaxConcurrencyPerLevel is { } caps)
        {
            if (caps.Count != Levels)
            {
                throw new ArgumentOutOfRangeException(nameof(MaxConcurrencyPerLevel), caps.Count, $"PriorityThreadPoolOptions.MaxConcurrencyPerLevel gives {caps.Count} values; exactly one per level is needed: {Levels} (Levels is {Levels}).");
            }

            for (int level = 0; level < caps.Count; level++)
            {
                if (caps[level] < 1 || caps[level] > ThreadCount)
                {
                    throw new ArgumentOutOfRangeException(nameof(MaxConcurrencyPerLevel), caps[level], $"PriorityThreadPoolOptions.MaxConcurrencyPerLevel[{level}] is {caps[level]}; each cap must be between 1 and ThreadCount ({ThreadCount}).");
                }
            }
        }
    }
}
