using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Timers;

namespace PriorityAsync.Tests.Reliability.Watchdog;

/// <summary>The watchdog runs on a thread of its own: with every thread-pool thread blocked, a stalled loop is still reported.</summary>
[Collection(PoolStarvationCollection.Name)]
public sealed class StarvedPoolStallTests
{
    [Fact]
    public void StalledLoop_WithThePoolStarved_IsReported()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions
        {
            Levels = 2,
            Name = "starved-stall-" + Guid.NewGuid().ToString("N")[..8],
            StallTimeout = TimeSpan.FromMilliseconds(100),
        });
        using var disposeLoop = loop.BoundedDisposal();
        using var release = new ManualResetEventSlim(false);
        using var reported = new ManualResetEventSlim(false);
        bool poolStarvedWhenReported = false;
        loop.Context.StallDetected += (_, _) =>
        {
            poolStarvedWhenReported = StarvedPool.IsStarved;
            reported.Set();
            release.Set();
        };

        using (new StarvedPool())
        {
            using var blocking = new ManualResetEventSlim(false);
            loop.Context.GetSynchronizationContext(0).Post(
                _ =>
                {
                    blocking.Set();
                    release.Wait(TestTimeout.Unexpected); // the blocked item
                },
                null);
            blocking.WaitOrFail("the blocking item to start"); // else the level-1 item could run first, and nothing would wait
            loop.Context.GetSynchronizationContext(1).Post(_ => { }, null); // the work it keeps waiting
            reported.WaitOrFail("the stall report, with the pool starved");
        }

        poolStarvedWhenReported.Should().BeTrue("the report came while every pool thread was still blocked");
    }
}
