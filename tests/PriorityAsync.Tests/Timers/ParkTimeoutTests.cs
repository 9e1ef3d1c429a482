using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Timers;

/// <summary>
/// T3 (Context/PriorityContext.cs, "Timers"): a parked loop with an armed timer sleeps no longer than until the earliest due time,
/// rounded up to a whole millisecond. The timeout Park would use is computed from the heap's minimum, kept without the lock.
/// </summary>
public class ParkTimeoutTests
{
    [Fact]
    public async Task ParkTimeout_FollowsTheEarliestArmedTimer_AndIsInfiniteWithNone()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityContext context = loop.Context;
        context.ParkTimeoutForTests.Should().Be(Timeout.Infinite, "no timer is armed");

        using ITimer late = context.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
        context.ParkTimeoutForTests.Should().BeInRange(59 * 60 * 1000, 60 * 60 * 1000, "the earliest timer is due in an hour");

        using ITimer soon = context.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Timeout.InfiniteTimeSpan);
        context.ParkTimeoutForTests.Should().BeInRange(59 * 1000, 60 * 1000, "a timer due sooner was armed");

        soon.Dispose();
        context.ParkTimeoutForTests.Should().BeInRange(59 * 60 * 1000, 60 * 60 * 1000, "the sooner one is gone");

        late.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        context.ParkTimeoutForTests.Should().Be(Timeout.Infinite, "nothing is armed any more");
    }

    [Fact]
    public async Task ParkTimeout_InfiniteDelayOnly_IsInfinite()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        using var cancel = new CancellationTokenSource();
        Task pending = loop.Context.RunOn(0, async () => await Priority.Delay(Timeout.InfiniteTimeSpan, cancel.Token));
        TimerTestHelpers.WaitUntil(() => loop.Context.ArmedTimerCount == 1, "the infinite delay to be armed");
        loop.Context.ParkTimeoutForTests.Should().Be(Timeout.Infinite, "an infinite delay never comes due");
        await cancel.CancelAsync();
        Func<Task> awaitPending = () => pending.WithTimeout("the cancelled delay");
        await awaitPending.Should().ThrowAsync<OperationCanceledException>();
    }

    [Fact]
    public async Task IdleLoop_WaitsForItsOwnTimer_AndFiresIt()
    {
        // The loop parks with a timeout to the delay's due time; either its own timed wait or the alarm (T0) fires it: the entry
        // must finish either way (bounded by the test's timeout, not by a timing assertion).
        bool resumed = false;
        var run = Task.Run(() => PriorityContext.Run(async () =>
        {
            for (int i = 0; i < 5; i++)
            {
                await Priority.Delay(TimeSpan.FromMilliseconds(3));
            }

            resumed = true;
        }));
        await run.WithTimeout("the delays on an idle loop");
        resumed.Should().BeTrue();
    }
}
