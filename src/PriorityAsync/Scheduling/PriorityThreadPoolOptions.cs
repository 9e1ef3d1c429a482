using System;
using System.Collections.Generic;

namespace PriorityAsync;

/// <summary>Settings for a <see cref="PriorityThreadPool"/>: the settings every priority scheduler takes
/// (<see cref="PrioritySchedulerOptions"/>), the thread count and the caps per level. Validated when the pool is created.</summary>
public sealed class PriorityThreadPoolOptions : PrioritySchedulerOptions
{
    /// <summary>The largest allowed value of <see cref="ThreadCount"/>.</summary>
    public const int MaxThreadCount = 256;

    /// <summary>Gets or sets the number of dedicated threads that run the pool's work; they are called "<c>Name</c> #i".</summary>
    /// <value>The default value is <see cref="Environment.ProcessorCount"/>. Allowed: 1 to <see cref="MaxThreadCount"/> (256).</value>
    public int ThreadCount { get; set; } = Environment.ProcessorCount;

    /// <summary>
    /// Gets or sets the most threads each level may use at once (index L is level L), or <see langword="null"/> for no cap: for
    /// example <c>[ThreadCount - 1, ThreadCount, ThreadCount]</c> keeps one thread free of bulk work (level 0) for urgent work.
    /// </summary>
    /// <remarks>A cap never makes a thread idle while runnable work of another level waits: a thread skips a level at its cap and
    /// takes the best item of the others.</remarks>
    /// <value>The default value is <see langword="null"/>. Otherwise exactly <see cref="PrioritySchedulerOptions.Levels"/> values, each
    /// from 1 to <see cref="ThreadCount"/>.</value>
    public IReadOnlyList<int>? MaxConcurrencyPerLevel { get; set; }

    /// <summary>For tests: called on the constructing thread before each pool thread starts, with the pool and the thread's index (a
    /// throw there stands for the OS refusing a thread).</summary>
    internal Action<PriorityThreadPool, int>? ThreadStartingForTests { get; set; }

    /// <summary>For tests: the pool's <c>DequeueObserver</c> and <c>DequeueStarting</c> from its construction, so that no dequeue goes
    /// unobserved.</summary>
    internal (Action<int, object?> Observer, Action? Starting)? DequeueHooksForTests { get; set; }

    private protected override void AddErrors(List<OptionError> errors)
    {
        base.AddErrors(errors);
        if (TimeProvider is VirtualTimeProvider clock)
        {
            // [V-ONE]: one loop advances a virtual clock when idle; no one of the pool's threads can tell that the whole pool is.
            errors.Add(new(
                nameof(TimeProvider),
                clock,
                "a clock a pool can use: a VirtualTimeProvider is advanced by the loop of one PriorityContext when it has nothing to run, and no " +
                "one of a pool's threads can tell that the whole pool is idle (work running on one may be about to wake another), so it would " +
                "move time past work in flight. Run the code under test on a PriorityContext, or give the pool a clock the test advances itself " +
                "(FakeTimeProvider, Microsoft.Extensions.TimeProvider.Testing)"));
        }

        if (ThreadCount is < 1 or > MaxThreadCount)
        {
            errors.Add(new(nameof(ThreadCount), ThreadCount, $"between 1 and {MaxThreadCount}"));
            return;
        }

        if (MaxConcurrencyPerLevel is not { } caps)
        {
            return;
        }

        if (caps.Count != Levels)
        {
            errors.Add(new(nameof(MaxConcurrencyPerLevel), caps.Count, $"null (no cap) or one value per level: {Levels} values (Levels is {Levels})", $"{caps.Count} values"));
            return;
        }

        for (int level = 0; level < caps.Count; level++)
        {
            if (caps[level] < 1 || caps[level] > ThreadCount)
            {
                errors.Add(new($"{nameof(MaxConcurrencyPerLevel)}[{level}]", caps[level], $"between 1 and ThreadCount ({ThreadCount})"));
            }
        }
    }
}
