using System;
using System.Linq;

namespace FrameLoop;

/// <summary>The frame loop and its continuations. The defaults are the README's run.</summary>
internal sealed record Settings
{
    /// <summary>Gets how long each drain is run for.</summary>
    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>Gets whether the run is on virtual time (exact figures at any load) instead of the machine's clock.</summary>
    public bool Virtual { get; init; }

    /// <summary>Gets the drains to run: "fifo", "priority".</summary>
    public bool Fifo { get; init; } = true;

    /// <summary>See <see cref="Fifo"/>.</summary>
    public bool Priority { get; init; } = true;

    /// <summary>Gets the frame rate.</summary>
    public int FramesPerSecond { get; init; } = 60;

    /// <summary>Gets the game logic's time per frame, before the drain.</summary>
    public TimeSpan Update { get; init; } = TimeSpan.FromMilliseconds(3);

    /// <summary>Gets the rendering's time per frame, after the drain.</summary>
    public TimeSpan Render { get; init; } = TimeSpan.FromMilliseconds(5);

    /// <summary>Gets PriorityAsync's drain budget per frame.</summary>
    public TimeSpan Budget { get; init; } = TimeSpan.FromMilliseconds(4);

    /// <summary>Gets the input events per second (their intervals are uniform between 0 and twice the mean).</summary>
    public int InputsPerSecond { get; init; } = 50;

    /// <summary>Gets an input handler's time.</summary>
    public TimeSpan InputCost { get; init; } = TimeSpan.FromMilliseconds(0.1);

    /// <summary>Gets the number of animations, each one step per frame.</summary>
    public int Animations { get; init; } = 20;

    /// <summary>Gets an animation step's time.</summary>
    public TimeSpan AnimationCost { get; init; } = TimeSpan.FromMilliseconds(0.05);

    /// <summary>Gets the time between two waves of background loading (a level, a chunk of the world streaming in).</summary>
    public TimeSpan WavePeriod { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Gets the assets of a wave: each a disk read (from a cache: done within <see cref="ReadSpread"/>), then a parse and
    /// upload on the main thread.</summary>
    public int Assets { get; init; } = 60;

    /// <summary>Gets how long after the wave starts the reads complete (uniformly).</summary>
    public TimeSpan ReadSpread { get; init; } = TimeSpan.FromMilliseconds(40);

    /// <summary>Gets the shortest parse of an asset (uniform up to <see cref="ParseMax"/>).</summary>
    public TimeSpan ParseMin { get; init; } = TimeSpan.FromMilliseconds(0.5);

    /// <summary>See <see cref="ParseMin"/>.</summary>
    public TimeSpan ParseMax { get; init; } = TimeSpan.FromMilliseconds(1.5);

    /// <summary>Gets a wave's decompression, on the main thread, in steps of <see cref="DecompressStep"/> with a yield point after each.</summary>
    public TimeSpan Decompress { get; init; } = TimeSpan.FromMilliseconds(24);

    /// <summary>See <see cref="Decompress"/>.</summary>
    public TimeSpan DecompressStep { get; init; } = TimeSpan.FromMilliseconds(0.5);

    /// <summary>Gets the seed of the input times, the read times and the parse times (the same in both drains).</summary>
    public int Seed { get; init; } = 34;

    /// <summary>Gets the frame's period.</summary>
    public TimeSpan FramePeriod => TimeSpan.FromTicks(TimeSpan.TicksPerSecond / FramesPerSecond);

    /// <summary>Gets the longest single continuation (one that cannot yield): the most a drain may overrun its budget by.</summary>
    public TimeSpan LongestItem => new[] { ParseMax, DecompressStep, AnimationCost, InputCost }.Max();

    /// <summary>Gets how long after the start the first wave of loading starts.</summary>
    public static TimeSpan FirstWave => TimeSpan.FromSeconds(0.5);

    /// <summary>Gets the shortest run: long enough for one wave to start and load (three quarters of a period).</summary>
    public TimeSpan ShortestDuration => FirstWave + WavePeriod * 3 / 4;

    /// <summary>One line for bad combinations, or null.</summary>
    public string? Validate()
    {
        if (Duration < ShortestDuration)
        {
            return SampleFormat.Invariant(
                $"--duration must be at least {SampleFormat.Ms(ShortestDuration)}: the first wave of loading starts {SampleFormat.Ms(FirstWave)} in and needs three quarters of a {SampleFormat.Ms(WavePeriod)} period.");
        }

        if (Update + Render + Budget + LongestItem > FramePeriod)
        {
            return SampleFormat.Invariant(
                $"--update + --render + --budget + the longest item ({SampleFormat.Ms(LongestItem)}) is {SampleFormat.Ms(Update + Render + Budget + LongestItem)}, more than a frame at {FramesPerSecond} fps ({SampleFormat.Ms(FramePeriod)}): no drain could keep the frame.");
        }

        if (ParseMin > ParseMax)
        {
            return "--parse-min is above --parse-max.";
        }

        return null;
    }
}
