using PriorityAsync.Tests.Infrastructure;
using Xunit.Abstractions;
using static PriorityAsync.Tests.Timers.TimerTestHelpers;

namespace PriorityAsync.Tests.Timers;

/// <summary>Starving the pool would break tests running at the same time in this process: these run alone.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class PoolStarvationCollection
{
    public const string Name = "Pool starvation";
}

/// <summary>
/// The loop's timers do not depend on the thread pool: with every pool thread blocked, loop timers fire on the loop, in due order,
/// with the pool still starved; a plain <see cref="Task.Delay(TimeSpan)"/> (the runtime's timer queue, completed through the pool) is
/// the contrast, reported in the output.
/// </summary>
[Collection(PoolStarvationCollection.Name)]
public class PoolStarvationTests(ITestOutputHelper output)
{
    private readonly ITestOutputHelper _output = output;

    [Fact]
    public void LoopTimers_WithThePoolStarved_FireOnTheLoopInOrder()
    {
        // Only the loop timers' half is asserted: whether a plain Task.Delay, due first, is still waiting when they fire depends on
        // the test runner's own pool threads (one whose work ends takes the runtime's timer work, queued ahead of the blockers), so
        // it is written to the output, as the contrast, not asserted.
        bool plainDelayDone = RunOnce();
        _output.WriteLine($"the plain Task.Delay, due first, had {(plainDelayDone ? string.Empty : "not ")}completed when the last loop timer fired");
    }

    /// <summary>Returns whether the plain delay had completed when the last loop timer fired.</summary>
    private static bool RunOnce()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "starved" });
        using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        using var allFired = new ManualResetEventSlim(false);
        Task? plainDelay = null;
        bool plainDelayDoneWhenLoopTimersFired = true;
        var pool = new StarvedPool();
        using (pool)
        {
            // A plain delay, due first: its completion needs a pool thread.
            plainDelay = Task.Delay(TimeSpan.FromMilliseconds(1));

            // Loop timers at three levels, due after it, created from this (non-loop) thread with explicit levels. Due order and
            // priority agree, so the run order is the same whether the loop finds them due one by one or several at once.
            (int Level, int Ms, string Name)[] plan = [(2, 10, "a"), (2, 20, "b"), (1, 30, "c"), (0, 40, "d")];
            foreach (var (level, ms, name) in plan)
            {
                loop.Context.GetTimeProvider(level).CreateTimer(
                    _ =>
                    {
                        log.Add($"{name}:{PriorityContext.CurrentLevel}:{Environment.CurrentManagedThreadId == loop.ManagedThreadId}");
                        if (log.Entries.Length == plan.Length)
                        {
                            plainDelayDoneWhenLoopTimersFired = plainDelay.IsCompleted;
                            allFired.Set();
                        }
                    },
                    null,
                    TimeSpan.FromMilliseconds(ms),
                    Timeout.InfiniteTimeSpan);
            }

            allFired.WaitOrFail("the loop timers, with the pool starved");
            bool poolStillStarved = StarvedPool.IsStarved;

            log.Entries.Should().Equal("a:2:True", "b:2:True", "c:1:True", "d:0:True");
            poolStillStarved.Should().BeTrue("the test is only meaningful while blockers still wait in the pool's queue");
        }

        WaitUntil(() => plainDelay!.IsCompleted, "the plain delay to complete once the pool is released");
        pool.BlockersDone.Should().Be(pool.Blockers, "every blocker ran once the pool was released");
        return plainDelayDoneWhenLoopTimersFired;
    }
}
