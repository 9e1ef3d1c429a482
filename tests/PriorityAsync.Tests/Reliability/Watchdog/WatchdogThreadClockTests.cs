using System.Collections.Concurrent;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Watchdog;

/// <summary>
/// [O-STALL] on a test clock: a watchdog thread of the test's own (<see cref="ManualWatchdogClock"/>) watches real loops, whose
/// stall watchdog is off (no other watchdog thread is told of them). It sleeps without a deadline while every thread it watches is
/// idle, however far the clock moves, wakes as one leaves its park, reports a stall that began after an hour's idleness a timeout
/// after it began, and sleeps again once the loop is idle. Every "nothing happened" here is read with the clock past the watchdog's
/// period and its thread waiting: no real time is waited for.
/// </summary>
public sealed class WatchdogThreadClockTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan s_interval = Internal.Watchdog.CheckInterval(s_timeout); // 250 ms

    [Fact]
    public async Task Run_EveryWatchedThreadIdle_SleepsWithoutCheckingHoweverFarTheClockMoves()
    {
        await using var loop = new WatchedLoop("watchdog-clock-idle");
        loop.Clock.WaitUntilAsleepWithoutDeadline("its only loop is parked");

        loop.Clock.Advance(TimeSpan.FromHours(1));

        loop.Watchdogs.Checks.Should().Be(0, "an hour of idleness, 14,400 check intervals, costs the watchdog's thread no check");
        loop.Clock.IsAsleepWithoutDeadline.Should().BeTrue();
        loop.Reports.Should().BeEmpty();
    }

    [Fact]
    public async Task Run_LoopBlockedAfterAnIdleHour_WakesAndReportsTheStallOneTimeoutAfterItBegan()
    {
        await using var loop = new WatchedLoop("watchdog-clock-blocked");
        loop.Clock.WaitUntilAsleepWithoutDeadline("its only loop is parked");
        loop.Clock.Advance(TimeSpan.FromHours(1));

        // The loop blocks in an item; work waits behind it. Nothing but the loop leaving its park can wake the watchdog's thread.
        using (LoopHarness.Pause pause = loop.Context.PauseLoop())
        {
            loop.Clock.WaitUntilWatching("the loop left its park, so the watchdog must watch it again");
            loop.Watchdogs.Checks.Should().Be(1, "the wake makes one check, not one per interval missed in the idle hour");
            loop.Context.GetSynchronizationContext(0).Post(static _ => { }, null);

            int steps = 0;
            while (loop.Reports.IsEmpty && steps < 10)
            {
                loop.Clock.Advance(s_interval);
                steps++;
            }

            loop.Reports.Should().ContainSingle("a stall that began after a long idle spell is reported");
            loop.Reports.Single().Level.Should().Be(0);
            loop.Reports.Single().WaitingFor.Should().Be(s_timeout, "the first check that is a whole timeout after the stall's first check reports it");
            steps.Should().BeInRange(5, 6, "the stall's first check is one or two checks after the blocked item began (its start may fall before or after the wake's check)");

            for (int i = 0; i < 40; i++)
            {
                loop.Clock.Advance(s_interval);
            }

            loop.Reports.Should().ContainSingle("ten timeouts more of the same stall: one report per stall");
        }

        // Released: the loop runs the waiting item and parks; the next check sees its progress, and the thread sleeps again.
        loop.Context.WaitUntilParked();
        loop.Clock.Advance(s_interval);
        loop.Clock.WaitUntilAsleepWithoutDeadline("the loop is idle again");
        long checks = loop.Watchdogs.Checks;
        loop.Clock.Advance(TimeSpan.FromHours(1));
        loop.Watchdogs.Checks.Should().Be(checks, "idle again, the loop costs the watchdog's thread nothing");
        loop.Reports.Should().ContainSingle();
    }

    [Fact]
    public async Task Run_OneLoopIdleAnotherBusyWithNothingWaiting_ChecksBothEveryIntervalAndReportsNeither()
    {
        // Idle is not a stall, nor is a long item with nothing waiting behind it: checked every interval for ten timeouts, neither is
        // reported. The busy loop also keeps the watchdog's thread awake: it sleeps only while every thread it watches is idle.
        await using var idle = new WatchedLoop("watchdog-clock-idle-beside-busy");
        idle.Clock.WaitUntilAsleepWithoutDeadline("its only loop is parked");
        await using var busy = new WatchedLoop("watchdog-clock-busy", idle.Watchdogs, idle.Clock);
        using LoopHarness.Pause pause = busy.Context.PauseLoop();
        idle.Clock.WaitUntilWatching("one of its loops is busy");
        long checks = idle.Watchdogs.Checks;

        for (int i = 0; i < 40; i++)
        {
            idle.Clock.Advance(s_interval);
        }

        idle.Watchdogs.Checks.Should().Be(checks + 80, "each of the two loops is checked once per interval");
        idle.Reports.Should().BeEmpty();
        busy.Reports.Should().BeEmpty();
    }

    /// <summary>A loop without a stall watchdog of its own, watched by a watchdog on <see cref="Watchdogs"/>, a watchdog thread on a
    /// test clock: the loop's park exit tells that thread, as it tells the shared one of a loop with a watchdog.</summary>
    private sealed class WatchedLoop : IAsyncDisposable
    {
        private readonly PriorityContextThread _loop;
        private readonly Internal.Watchdog _watchdog;
        private readonly bool _ownsThread;

        public WatchedLoop(string name, WatchdogThread? watchdogs = null, ManualWatchdogClock? clock = null)
        {
            Clock = clock ?? new ManualWatchdogClock();
            Watchdogs = watchdogs ?? new WatchdogThread(Clock);
            _ownsThread = watchdogs is null;
            _loop = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2, StallTimeout = null });
            _loop.Context.Drain();
            _loop.Context.WaitUntilParked();
            _watchdog = Internal.Watchdog.CreateManual(_loop.Context.Threads[0], s_timeout);
            _loop.Context.StallDetected += (_, e) => Reports.Enqueue(e);
            Watchdogs.Register(_watchdog);
        }

        public ManualWatchdogClock Clock { get; }

        public WatchdogThread Watchdogs { get; }

        public PriorityContext Context => _loop.Context;

        public ConcurrentQueue<StallDetectedEventArgs> Reports { get; } = new();

        public async ValueTask DisposeAsync()
        {
            _watchdog.Dispose();
            if (_ownsThread)
            {
                Watchdogs.Stop();
            }

            await _loop.DisposeAsync().AsTask().WithTimeout("the watched loop to end");
        }
    }
}
