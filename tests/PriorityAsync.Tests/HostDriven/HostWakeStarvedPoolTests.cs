using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Timers;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>
/// [H-WAKE] with every thread-pool thread blocked: an idle host still hears of a loop timer that comes due, and its drain fires it.
/// The wake-up comes under the alarm's lock and is told from the library's own thread; told through the pool, it would wait for the
/// pool to be released. Runs alone (a starved pool would break the tests beside it).
/// </summary>
[Collection(PoolStarvationCollection.Name)]
public class HostWakeStarvedPoolTests
{
    [Fact]
    public void WorkAvailable_LoopTimerComesDueWithThePoolStarved_TellsTheIdleHostWhileThePoolIsStillStarved()
    {
        using var told = new ManualResetEventSlim(false);
        TestTimeout.OnOwnThread(
            () =>
            {
                PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(
                    new PriorityContextOptions { Levels = 3, StallTimeout = null, TimeSlice = null, Name = "starved host" },
                    workAvailable: told.Set);
                try
                {
                    int fired = 0;
                    using (var pool = new StarvedPool())
                    {
                        using ITimer timer = driver.Context.TimeProvider.CreateTimer(_ => fired++, null, TimeSpan.FromMilliseconds(20), Timeout.InfiniteTimeSpan);

                        told.WaitOrFail("the idle host to be told of the due loop timer, with the pool starved");
                        bool stillStarved = StarvedPool.IsStarved;

                        stillStarved.Should().BeTrue("the test is only meaningful while blockers still wait in the pool's queue");
                        fired.Should().Be(0, "the timer fires in the host's drain, on its thread");
                        driver.Drain().ItemsRun.Should().Be(1);
                        fired.Should().Be(1);
                    }
                }
                finally
                {
                    driver.Dispose();
                }
            },
            "the host thread");
    }
}
