using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Timers;

/// <summary>
/// <see cref="PriorityContextOptions.TimeProvider"/>: the loop timers run on the given clock, so advancing a <see cref="FakeTimeProvider"/>
/// fires <c>Priority.Delay</c> and the context's timers, on the loop, in due order, and nothing fires before it is advanced.
/// </summary>
public class TimerClockTests
{
    private static readonly TimeSpan Never = Timeout.InfiniteTimeSpan;

    [Fact]
    public async Task PriorityDelay_OnAFakeClock_FiresWhenAdvanced_InDueOrder_OnTheLoop()
    {
        var clock = new FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new TimerTestHelpers.Log();
        var armed = new CountdownEvent(3);
        Task waits = loop.Context.RunOn(1, async () =>
        {
            await Task.WhenAll(Wait("3 min", 3), Wait("1 min", 1), Wait("2 min", 2));
        });

        armed.Wait(TestTimeout.Unexpected).Should().BeTrue("the three delays are armed");
        clock.Advance(TimeSpan.FromSeconds(59));
        await loop.Context.RunOn(1, () => { }).WithTimeout("a lap of the loop");
        log.Entries.Should().BeEmpty("no delay is due before a minute has passed on the fake clock");

        clock.Advance(TimeSpan.FromMinutes(3));
        await waits.WithTimeout("the delays");
        log.Entries.Should().Equal("1 min on the loop", "2 min on the loop", "3 min on the loop");

        async Task Wait(string name, int minutes)
        {
            ValueTask delay = Priority.Delay(TimeSpan.FromMinutes(minutes));
            armed.Signal();
            await delay;
            log.Add($"{name} {(PriorityContext.Current == loop.Context ? "on the loop" : "elsewhere")}");
        }
    }

    [Fact]
    public async Task ContextTimeProvider_OnAFakeClock_TimersAndTaskDelayFireWhenAdvanced_AndItsClockIsTheFakeOne()
    {
        var clock = new FakeTimeProvider(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        TimeProvider provider = loop.Context.GetTimeProvider(2);
        provider.GetUtcNow().Should().Be(clock.GetUtcNow());
        provider.TimestampFrequency.Should().Be(clock.TimestampFrequency);

        var ticks = new SemaphoreSlim(0);
        int level = -1;
        using ITimer timer = provider.CreateTimer(_ => { level = PriorityContext.CurrentLevel; ticks.Release(); }, null, TimeSpan.FromSeconds(10), TimeSpan.FromSeconds(10));
        Task delayed = Task.Delay(TimeSpan.FromSeconds(15), loop.Context.TimeProvider);

        for (int i = 1; i <= 3; i++)
        {
            clock.Advance(TimeSpan.FromSeconds(10)); // one period at a time: each tick fires
            (await ticks.WaitAsync(TestTimeout.Unexpected)).Should().BeTrue($"tick {i} fires when the clock reaches it");
        }

        level.Should().Be(2, "a timer of GetTimeProvider(2) fires at level 2");
        await delayed.WithTimeout("Task.Delay on the context's TimeProvider, due at 15 s");
        provider.GetUtcNow().Should().Be(new DateTimeOffset(2030, 1, 1, 0, 0, 30, TimeSpan.Zero));
    }

    [Fact]
    public async Task Periodic_OnAFakeClock_LoopHeldForManyPeriods_QueuesOneFiringAndSkipsTheMissedTicks()
    {
        // T2 without waiting for real time: the loop is held while the clock moves 30 periods on.
        var clock = new FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        int fired = 0;
        using ITimer timer = loop.Context.TimeProvider.CreateTimer(_ => fired++, null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));
        await loop.Context.RunOn(0, () =>
        {
            clock.Advance(TimeSpan.FromSeconds(30)); // from the loop itself: the firing can only run after this item
            fired.Should().Be(0);
        }).WithTimeout("the item holding the loop");
        await loop.Context.RunOn(0, () => { }).WithTimeout("a lap of the loop");
        fired.Should().Be(1, "one firing was queued while the loop was held; the missed ticks are skipped");
    }

    [Fact]
    public async Task OverdueTimer_SeenByTheWatchdog_OnTheContextsClock()
    {
        // The stall watchdog counts an overdue loop timer as waiting work: overdue by the loop timers' clock, not by Stopwatch.
        var clock = new FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        using ITimer timer = loop.Context.GetTimeProvider(2).CreateTimer(_ => { }, null, TimeSpan.FromHours(1), Never);
        (int before, int after) = await loop.Context.RunOn(0, () =>
        {
            int notYet = loop.Context.OverdueTimerLevel();
            clock.Advance(TimeSpan.FromHours(1)); // from the loop: the firing waits for this item to end
            return Task.FromResult((notYet, loop.Context.OverdueTimerLevel()));
        }).WithTimeout("the item");

        before.Should().Be(-1, "an hour has not passed on the context's clock");
        after.Should().Be(2, "the timer is overdue on the context's clock while the loop is held");
    }

    [Fact]
    public void Options_NullTimeProvider_ThrowsNamingTheDefault()
    {
        var options = new PriorityContextOptions();
        options.TimeProvider.Should().BeSameAs(TimeProvider.System);
        options.Invoking(o => o.TimeProvider = null!).Should().Throw<ArgumentNullException>().WithMessage("*TimeProvider.System*");
    }

    [Fact]
    public void Create_ProviderWhoseTimersCannotBeCreated_FailsClearly()
    {
        var options = new PriorityContextOptions { TimeProvider = new BrokenTimeProvider(throws: true) };
        FluentActions.Invoking(() => PriorityContext.Run(() => { }, options))
            .Should().Throw<ArgumentException>()
            .Where(e => e.ParamName == "TimeProvider" && e.InnerException is NotSupportedException)
            .WithMessage("*could not create a timer*no timers here*");

        options.TimeProvider = new BrokenTimeProvider(throws: false);
        FluentActions.Invoking(() => new PriorityContextThread(options))
            .Should().Throw<ArgumentException>().Where(e => e.ParamName == "TimeProvider").WithMessage("*returned null*");
    }

    private sealed class BrokenTimeProvider(bool throws) : TimeProvider
    {
        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) =>
            throws ? throw new NotSupportedException("no timers here") : null!;
    }
}
