using System;
using System.Globalization;
using LeaseWorker.Core;

namespace LeaseWorker;

/// <summary>
/// The experiment's parameters, in the seed's time (the article's numbers). Every duration runs scaled by <see cref="TimeScale"/>,
/// so the seed's 35-minute run fits in seconds; ratios between durations, which decide what gets lost, do not change.
/// </summary>
public sealed record Settings
{
    /// <summary>The smallest scaled duration allowed: Task.Delay and the timers that complete I/O tick in milliseconds.</summary>
    public static readonly TimeSpan TimerResolution = TimeSpan.FromMilliseconds(1);

    public int Messages { get; init; } = 12;

    public int Steps { get; init; } = 10;

    public TimeSpan Receive { get; init; } = TimeSpan.FromMilliseconds(250);

    public TimeSpan RefreshDelay { get; init; } = TimeSpan.FromSeconds(2);

    public TimeSpan RefreshDuration { get; init; } = TimeSpan.FromMilliseconds(250);

    public TimeSpan LeaseTimeout { get; init; } = TimeSpan.FromSeconds(5);

    public TimeSpan Cpu { get; init; } = TimeSpan.FromSeconds(1);

    public TimeSpan Io { get; init; } = TimeSpan.FromSeconds(1);

    public CpuKind CpuKind { get; init; } = CpuKind.Sleep;

    /// <summary>Slice length for CPU parts, with a checkpoint (<c>await Prioritize(level)</c>) between slices; null: whole parts.</summary>
    public TimeSpan? Checkpoint { get; init; }

    public double TimeScale { get; init; } = 0.1;

    /// <summary>The most pool threads <c>--starve-pool</c> may block.</summary>
    public const int MaxStarvePool = 256;

    /// <summary>Thread-pool threads blocked forever at start-up (<c>--starve-pool</c>), as a careless library would; 0: none.</summary>
    public int StarvePool { get; init; }

    /// <summary>
    /// <c>--virtual-time</c>: each run on a clock of its own (PriorityAsync's VirtualTimeProvider) instead of the machine's. Each CPU
    /// part advances it, every wait is a timer on it, and the mode's loop jumps it to the next timer when it has nothing to run: the
    /// results are exact and the same at any load, and a run takes milliseconds whatever its durations. Single-thread modes only.
    /// </summary>
    public bool VirtualTime { get; init; }

    /// <summary>How many slices each CPU part is cut into (1 without checkpoints).</summary>
    public int SlicesPerCpuPart =>
        Checkpoint is { } slice && slice > TimeSpan.Zero && Cpu > slice ? (int)Math.Ceiling(Cpu / slice) : 1;

    /// <summary>The longest time a lease may go without a renewal beyond the protocol's own refresh cycle before it is lost.</summary>
    public TimeSpan LatenessLimit => LeaseTimeout - RefreshDelay - RefreshDuration;

    /// <summary>A seed duration as it runs.</summary>
    public TimeSpan Scaled(TimeSpan seedTime) => TimeSpan.FromTicks((long)Math.Round(seedTime.Ticks * TimeScale));

    /// <summary>Checks the settings; returns a one-line reason when they cannot make a meaningful run.</summary>
    public string? Validate()
    {
        if (VirtualTime && (CpuKind != CpuKind.Sleep || StarvePool > 0))
        {
            return "--cpu-kind spin and --starve-pool have no meaning with --virtual-time: a CPU part advances the virtual clock, " +
                   "and no wait needs the thread pool.";
        }

        if (Messages is < 1 or > 1_000_000)
        {
            return $"--messages must be from 1 to 1000000 (got {Messages}).";
        }

        if (Steps is < 1 or > 10_000)
        {
            return $"--steps must be from 1 to 10000 (got {Steps}).";
        }

        if (StarvePool is < 0 or > MaxStarvePool)
        {
            return $"--starve-pool must be from 0 to {MaxStarvePool} (got {StarvePool}).";
        }

        if (double.IsNaN(TimeScale) || TimeScale <= 0 || TimeScale > 10)
        {
            return $"--time-scale must be a number in (0, 10] (got {TimeScale.ToString(CultureInfo.InvariantCulture)}).";
        }

        foreach ((string option, TimeSpan value) in Durations())
        {
            if (value < TimeSpan.Zero)
            {
                return $"{option} must not be negative (got {Format.Duration(value)}).";
            }
        }

        double workDays = (double)Messages * Steps * (Scaled(Cpu) + Scaled(Io)).TotalDays;
        if (workDays > 1)
        {
            return $"--messages x --steps x (CPU + I/O part) make {workDays:0.#} days of work as it runs; at most 1 day.";
        }

        if (RefreshDelay == TimeSpan.Zero)
        {
            return "--refresh-delay must be positive (0 would refresh the lease in a tight loop).";
        }

        if (Checkpoint is { } checkpoint && checkpoint <= TimeSpan.Zero)
        {
            return $"--checkpoint must be positive, or 'off' (got {Format.Duration(checkpoint)}).";
        }

        if (LeaseTimeout <= RefreshDelay + RefreshDuration)
        {
            return $"--lease ({Format.Duration(LeaseTimeout)}) must be longer than a refresh cycle " +
                   $"(--refresh-delay + --refresh = {Format.Duration(RefreshDelay + RefreshDuration)}), or every lease expires.";
        }

        foreach ((string option, TimeSpan value) in Durations())
        {
            TimeSpan scaled = Scaled(value);
            if (!VirtualTime && value > TimeSpan.Zero && scaled < TimerResolution)
            {
                double needed = TimerResolution.Ticks / (double)value.Ticks;
                return $"--time-scale {TimeScale.ToString(CultureInfo.InvariantCulture)} makes {option} {Format.Duration(value)} run as " +
                       $"{Format.Duration(scaled)}, below the 1 ms timer resolution, so a lease could not outlast a refresh; " +
                       $"use --time-scale {needed.ToString("0.####", CultureInfo.InvariantCulture)} or more.";
            }
        }

        return null;
    }

    /// <summary>Describes the settings on one line, in the seed's time.</summary>
    public string Describe() =>
        $"{Messages} messages x {Steps} steps of CPU {Format.Duration(Cpu)} ({CpuKind.ToString().ToLowerInvariant()}) + I/O {Format.Duration(Io)}; " +
        $"receive {Format.Duration(Receive)}; refresh every {Format.Duration(RefreshDelay)} taking {Format.Duration(RefreshDuration)}; " +
        $"lease {Format.Duration(LeaseTimeout)}; checkpoints " +
        (SlicesPerCpuPart > 1 ? $"every {Format.Duration(Checkpoint!.Value)} ({SlicesPerCpuPart} slices per CPU part)" : "off") +
        (StarvePool > 0 ? $"; {StarvePool} thread-pool threads blocked forever before the runs" : string.Empty) +
        (VirtualTime ? "; on virtual time" : string.Empty);

    private (string Option, TimeSpan Value)[] Durations() =>
    [
        ("--receive", Receive),
        ("--refresh-delay", RefreshDelay),
        ("--refresh", RefreshDuration),
        ("--lease", LeaseTimeout),
        ("--cpu", Cpu),
        ("--io", Io),
        ("--checkpoint", Checkpoint ?? TimeSpan.Zero),
    ];
}
