using System;
using System.Collections.Generic;
using System.Linq;

namespace FrameLoop;

/// <summary>What one drain did over the run.</summary>
internal sealed record DrainResult(
    string Drain,
    int Frames,
    int FramesOverBudget,
    TimeSpan WorstFrame,
    TimeSpan WorstDrain,
    TimeSpan InputP50,
    TimeSpan InputP99,
    TimeSpan InputMax,
    int Inputs,
    double BackgroundPerSecond,
    int AnimationSteps,
    TimeSpan WaveP50,
    TimeSpan WaveMax,
    int Waves);

/// <summary>The frame loop: at a fixed rate, the frame's start (animations due, maybe a wave), the game logic, the drain, the
/// rendering; a frame that runs late pushes the next one back, as a missed vertical sync does.</summary>
internal static class Frames
{
    public static DrainResult Run(Settings settings, bool priority)
    {
        using SimClock clock = settings.Virtual ? new VirtualClock() : new RealClock();
        using ContinuationDrain drain = priority ? new PriorityDrain(clock, settings.Budget) : new FifoDrain();
        var workload = new Workload(settings, clock, drain);
        long period = clock.Ticks(settings.FramePeriod);
        int frames = (int)(settings.Duration.Ticks / settings.FramePeriod.Ticks);
        long frameStart = clock.Now + period;
        workload.Begin(frameStart, frames * period);

        var frameTimes = new List<long>(frames);
        long worstDrain = 0;
        for (int frame = 0; frame < frames; frame++)
        {
            clock.WaitUntil(frameStart);
            long begun = clock.Now;
            workload.OnFrameStart();
            clock.Spend(settings.Update);
            long drainStart = clock.Now;
            drain.Drain();
            worstDrain = Math.Max(worstDrain, clock.Now - drainStart);
            clock.Spend(settings.Render);
            frameTimes.Add(clock.Now - begun);
            frameStart = Math.Max(frameStart + period, clock.Now);
        }

        workload.End();
        for (int i = 0; i < 3; i++)
        {
            drain.Drain(); // the input handler and the animations see the end
        }

        return new DrainResult(
            drain.Name,
            frames,
            frameTimes.Count(t => t > period),
            clock.Duration(frameTimes.Max()),
            clock.Duration(worstDrain),
            clock.Duration(Percentile(workload.InputLatencies, 0.50)),
            clock.Duration(Percentile(workload.InputLatencies, 0.99)),
            clock.Duration(workload.InputLatencies.DefaultIfEmpty().Max()),
            workload.InputLatencies.Count,
            workload.BackgroundItems / settings.Duration.TotalSeconds,
            workload.AnimationSteps,
            clock.Duration(Percentile(workload.WaveTimes, 0.50)),
            clock.Duration(workload.WaveTimes.DefaultIfEmpty().Max()),
            workload.WaveTimes.Count);
    }

    /// <summary>The nearest-rank percentile: the smallest value at or above <paramref name="fraction"/> of the values.</summary>
    private static long Percentile(List<long> values, double fraction)
    {
        if (values.Count == 0)
        {
            return 0;
        }

        long[] sorted = [.. values.Order()];
        return sorted[Math.Max(0, (int)Math.Ceiling(fraction * sorted.Length) - 1)];
    }
}
