using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>
/// A context its host drives on a <see cref="VirtualTimeProvider"/>: it never parks, so it never moves the clock; the host does, as
/// a frame clock would, and a drain after the move runs what came due.
/// </summary>
public class VirtualClockDrainTests
{
    [Fact]
    public void Drain_OnAVirtualClock_RunsADelayOnlyOnceTheHostHasAdvancedTheClockPastIt()
    {
        TestTimeout.OnOwnThread(
            () =>
            {
                var clock = new VirtualTimeProvider();
                using PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(
                    new PriorityContextOptions { Levels = 2, TimeProvider = clock, StallTimeout = null, Name = "frames" });
                var log = new List<string>();
                driver.Context.GetSynchronizationContext(1).Post(
                    async _ =>
                    {
                        log.Add("before");
                        await Priority.Delay(TimeSpan.FromMilliseconds(10));
                        log.Add($"after, at {clock.Elapsed.TotalMilliseconds} ms");
                    },
                    null);

                driver.Drain().ItemsRun.Should().Be(1);
                driver.Drain().WorkRemains.Should().BeFalse();
                clock.Elapsed.Should().Be(TimeSpan.Zero, "an idle drain never moves the clock: the host owns time");

                clock.Advance(TimeSpan.FromMilliseconds(9));
                driver.Drain().ItemsRun.Should().Be(0);
                clock.Advance(TimeSpan.FromMilliseconds(1));
                driver.Drain().ItemsRun.Should().Be(1);

                log.Should().Equal("before", "after, at 10 ms");
            },
            "the host thread");
    }
}
