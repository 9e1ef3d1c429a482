using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;
using static PriorityAsync.Tests.Timers.TimerTestHelpers;

namespace PriorityAsync.Tests.Timers;

/// <summary>A CPU-bound item with <c>await Prioritize</c> checkpoints lets a due timer of a higher level run at the next checkpoint.</summary>
public class TimerCheckpointTests
{
    [Fact]
    public async Task Prioritize_DueTimerAbove_RunsItAtTheCheckpoint()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        await loop.Context.RunOn(1, async () =>
        {
            using ITimer lease = loop.Context.GetTimeProvider(2).CreateTimer(_ => log.Add("timer"), null, TimeSpan.FromMilliseconds(1), Timeout.InfiniteTimeSpan);

            // CPU work without awaits: the timer comes due (the alarm raises the flag), but nothing can run it.
            long start = Stopwatch.GetTimestamp();
            while (!loop.Context.TimersDueFlag && Stopwatch.GetElapsedTime(start) < TestTimeout.Unexpected)
            {
                Thread.SpinWait(100);
            }

            loop.Context.TimersDueFlag.Should().BeTrue("the alarm raises the flag while the loop is busy");
            log.Add("cpu");
            await Prioritize(1); // the checkpoint: queues the due level-2 firing, which then runs before us
            log.Add("after checkpoint");
        }).WithTimeout("the CPU item");

        log.Entries.Should().Equal("cpu", "timer", "after checkpoint");
    }

    [Fact]
    public async Task Prioritize_DueTimerAtTheSameLevel_GoesOnInlineAndTheTimerRunsLater()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        await loop.Context.RunOn(1, async () =>
        {
            loop.Context.GetTimeProvider(1).CreateTimer(_ => log.Add("timer"), null, TimeSpan.Zero, Timeout.InfiniteTimeSpan);
            await Prioritize(1); // nothing above level 1: goes on at once; the firing waits at level 1, FIFO
            log.Add("inline");
            await Yield();
            log.Add("after yield");
        }).WithTimeout("the item");

        log.Entries.Should().Equal("inline", "timer", "after yield");
    }
}
