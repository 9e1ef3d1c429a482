using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Timers;

namespace PriorityAsync.Tests.Pool;

/// <summary>The pool's timers and watchdog do not depend on the .NET thread pool, and its watchdog watches each thread on its own.</summary>
[Collection(PoolStarvationCollection.Name)]
public sealed class PoolStarvationAndStallTests
{
    [Fact]
    public void Delay_WithTheThreadPoolStarved_FiresOnThePoolsOwnThreads()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 2, Name = "starved-pool" });
        using var disposePool = pool.BoundedDisposal();
        using var fired = new ManualResetEventSlim(false);
        bool starvedWhenFired = false;
        int levelWhenFired = -1;
        using (new StarvedPool())
        {
            pool.GetSynchronizationContext(1).Post(
                async _ =>
                {
                    await Priority.Delay(TimeSpan.FromMilliseconds(5));
                    await Priority.Delay(TimeSpan.FromMilliseconds(5));
                    starvedWhenFired = StarvedPool.IsStarved;
                    levelWhenFired = Priority.CurrentLevel;
                    fired.Set();
                },
                null);
            fired.WaitOrFail("the pool's delays, with the .NET thread pool starved");
        }

        starvedWhenFired.Should().BeTrue("the delays fired while every .NET thread-pool thread was blocked");
        levelWhenFired.Should().Be(1);
    }

    [Fact]
    public void OneBlockedThread_WhileTheOthersKeepRunning_IsReported()
    {
        // The events first, so they are disposed after the pool, whose disposal waits for the items that use them.
        using var release = new ManualResetEventSlim(false);
        using var reported = new ManualResetEventSlim(false);
        using var blocking = new ManualResetEventSlim(false);
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            ThreadCount = 2,
            Levels = 3,
            Name = "stall-one-of-two",
            StallTimeout = TimeSpan.FromMilliseconds(100),
        });
        using var disposePool = pool.BoundedDisposal();
        StallDetectedEventArgs? report = null;
        pool.StallDetected += (_, e) =>
        {
            report = e;
            reported.Set();
            release.Set();
        };

        pool.GetSynchronizationContext(1).Post(
            _ =>
            {
                blocking.Set();
                release.Wait(TestTimeout.Unexpected); // one thread blocked
            },
            null);
        blocking.WaitOrFail("the blocking item to start");

        // The other thread keeps the pool moving (a level-2 item that yields forever, so the pool's summed dispatch count never
        // stops growing) while a level-0 item waits: only a per-thread watchdog sees the blocked thread.
        pool.GetSynchronizationContext(2).Post(
            async _ =>
            {
                while (!release.IsSet)
                {
                    await Priority.Yield();
                }
            },
            null);
        pool.GetSynchronizationContext(0).Post(_ => { }, null);
        reported.WaitOrFail("the stall report for the blocked thread");
        report!.StallTimeout.Should().Be(TimeSpan.FromMilliseconds(100));
        report.PendingCount.Should().BeGreaterThan(0);
    }
}
