using System.Diagnostics;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;
using static PriorityAsync.Tests.Timers.TimerTestHelpers;

namespace PriorityAsync.Tests.Timers;

/// <summary>The timers of <see cref="PriorityContext.TimeProvider"/>: ordering, levels, Change/Dispose, periods, the end of the context.</summary>
public class LoopTimerTests
{
    private static readonly TimeSpan Never = Timeout.InfiniteTimeSpan;

    [Fact]
    public async Task CreateTimer_SeveralDueTimesAtOneLevel_FireInDueOrderOnTheLoop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        TimeProvider provider = loop.Context.GetTimeProvider(1);
        var timers = new List<(LoopTimer Timer, string Name)>();
        foreach (int ms in new[] { 30, 10, 50, 20, 40 })
        {
            ITimer timer = provider.CreateTimer(
                _ =>
                {
                    log.Add($"{ms}:{Environment.CurrentManagedThreadId == loop.ManagedThreadId}:{PriorityContext.CurrentLevel}");
                    if (log.Entries.Length == 5)
                    {
                        done.SetResult();
                    }
                },
                null,
                TimeSpan.FromMilliseconds(ms),
                Never);
            timers.Add(((LoopTimer)timer, $"{ms}:True:1"));
        }

        await done.Task.WithTimeout("five timers");

        // The due timestamps decide (a loaded machine may delay the creations); with 10 ms steps they are 10, 20, 30, 40, 50.
        log.Entries.Should().Equal(timers.OrderBy(t => t.Timer.Due).Select(t => t.Name));
        loop.Context.ArmedTimerCount.Should().Be(0);
    }

    [Fact]
    public async Task CreateTimer_DueWhileTheLoopIsBusy_FireInDueOrderThenRunByStrictPriority()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        var created = new List<(LoopTimer Timer, int Level, string Name)>();
        using (loop.Context.PauseLoop())
        {
            // Due in this order: L0a, L2a, L1a, L2b, L0b, L1b. All come due while the loop is held.
            (int Level, int Ms, string Name)[] plan = [(0, 1, "L0a"), (2, 2, "L2a"), (1, 3, "L1a"), (2, 4, "L2b"), (0, 5, "L0b"), (1, 6, "L1b")];
            foreach (var (level, ms, name) in plan)
            {
                var timer = (LoopTimer)loop.Context.GetTimeProvider(level).CreateTimer(_ => log.Add(name), null, TimeSpan.FromMilliseconds(ms), Never);
                created.Add((timer, level, name));
            }

            long lastDue = created.Max(c => c.Timer.Due);
            WaitUntil(() => Stopwatch.GetTimestamp() > lastDue, "every timer to be due");

            // Posted after the timers came due but before the loop saw them: FIFO ahead of the level-1 firings.
            loop.Context.GetSynchronizationContext(1).Post(_ => log.Add("post1"), null);
            WaitUntil(() => loop.Context.TimersDueFlag, "the alarm to raise the flag of the held loop");
        }

        loop.Context.Drain();

        // Strict priority between levels; within a level, the post first (it was queued before the loop saw the due timers), then
        // the firings in due order. With the planned due times: L2a, L2b, post1, L1a, L1b, L0a, L0b.
        var expected = new List<string>();
        for (int level = 2; level >= 0; level--)
        {
            if (level == 1)
            {
                expected.Add("post1");
            }

            expected.AddRange(created.Where(c => c.Level == level).OrderBy(c => c.Timer.Due).Select(c => c.Name));
        }

        log.Entries.Should().Equal(expected);
    }

    [Fact]
    public async Task CreateTimer_InsideTheContext_FiresAtTheCreatingLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 4, DefaultLevel = 1 });
        await using var disposeLoop = loop.BoundedDisposal();
        var fired = new TaskCompletionSource<(int Level, bool OnLoop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        await loop.Context.RunOn(3, () =>
        {
            loop.Context.TimeProvider.CreateTimer(
                _ => fired.SetResult((PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId == loop.ManagedThreadId)),
                null,
                TimeSpan.FromMilliseconds(1),
                Never);
        }).WithTimeout("creating the timer");

        (await fired.Task.WithTimeout("the timer")).Should().Be((3, true));
    }

    [Fact]
    public async Task CreateTimer_FromAnotherThread_FiresOnTheLoopAtTheDefaultLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 4, DefaultLevel = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        var fired = new TaskCompletionSource<(int Level, bool OnLoop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        TestTimeout.OnOwnThread(
            () => loop.Context.TimeProvider.CreateTimer(
                _ => fired.SetResult((PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId == loop.ManagedThreadId)),
                null,
                TimeSpan.FromMilliseconds(1),
                Never),
            "creator");

        (await fired.Task.WithTimeout("the timer")).Should().Be((2, true));
    }

    [Fact]
    public async Task CreateTimer_FromAnotherContextsLoop_FiresAtTheDefaultLevelOfItsOwnContext()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 4, DefaultLevel = 0 });
        await using var disposeLoop = loop.BoundedDisposal();
        var other = new PriorityContextThread(new PriorityContextOptions { Levels = 4 });
        await using var disposeOther = other.BoundedDisposal();
        var fired = new TaskCompletionSource<(int Level, bool OnLoop)>(TaskCreationOptions.RunContinuationsAsynchronously);
        await other.Context.RunOn(3, () =>
        {
            loop.Context.TimeProvider.CreateTimer(
                _ => fired.SetResult((PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId == loop.ManagedThreadId)),
                null,
                TimeSpan.Zero,
                Never);
        }).WithTimeout("creating the timer");

        (await fired.Task.WithTimeout("the timer")).Should().Be((0, true));
    }

    [Fact]
    public async Task GetTimeProvider_SameLevel_ReturnsTheSameInstance()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        loop.Context.GetTimeProvider(2).Should().BeSameAs(loop.Context.GetTimeProvider(2));
        loop.Context.GetTimeProvider(2).Should().NotBeSameAs(loop.Context.GetTimeProvider(1));
        loop.Context.TimeProvider.Should().BeSameAs(loop.Context.TimeProvider);
        loop.Context.TimeProvider.GetTimestamp().Should().BeGreaterThan(0);
        loop.Context.TimeProvider.TimestampFrequency.Should().Be(TimeProvider.System.TimestampFrequency);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    public async Task GetTimeProvider_LevelOutOfRange_Throws(int level)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        loop.Invoking(l => l.Context.GetTimeProvider(level)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(level));
    }

    [Fact]
    public async Task Dispose_BeforeDue_NeverFires()
    {
        // Only time has to pass here: a fake clock (PriorityContextOptions.TimeProvider) moves it on at once.
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        var sentinel = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        TimeProvider provider = loop.Context.GetTimeProvider(0);
        ITimer disposed = provider.CreateTimer(_ => log.Add("disposed"), null, TimeSpan.FromMilliseconds(5), Never);
        provider.CreateTimer(_ => sentinel.SetResult(), null, TimeSpan.FromMilliseconds(30), Never);
        disposed.Dispose();
        disposed.Dispose(); // idempotent

        clock.Advance(TimeSpan.FromMilliseconds(30));
        await sentinel.Task.WithTimeout("the later timer");
        log.Entries.Should().BeEmpty("a disposed timer does not fire, and it was due before the sentinel");
        disposed.Change(TimeSpan.Zero, Never).Should().BeFalse("Change on a disposed timer reports failure, as the system timers do");
    }

    [Fact]
    public async Task Dispose_WhileItsFiringIsQueued_CancelsTheFiring()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        int fired = 0;
        await loop.Context.RunOn(0, async () =>
        {
            ITimer timer = loop.Context.TimeProvider.CreateTimer(_ => fired++, null, TimeSpan.Zero, Never);
            await Prioritize(0); // a checkpoint: queues the due firing behind us, then goes on inline
            loop.Context.GetSnapshot().PendingPerLevel[0].Should().Be(1, "the firing is queued");
            timer.Dispose();
            await Yield(); // the queued firing runs (and does nothing) before we resume
        }).WithTimeout("the test body");

        fired.Should().Be(0, "after Dispose returns, no firing of the timer starts (T1)");
    }

    [Fact]
    public async Task Change_WhileItsFiringIsQueued_CancelsTheFiringAndRearms()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int fired = 0;
        await loop.Context.RunOn(0, async () =>
        {
            ITimer timer = loop.Context.TimeProvider.CreateTimer(
                _ =>
                {
                    fired++;
                    second.TrySetResult();
                },
                null,
                TimeSpan.Zero,
                Never);
            await Prioritize(0);
            timer.Change(Never, Never).Should().BeTrue();
            await Yield();
            fired.Should().Be(0, "Change cancelled the queued firing");
            timer.Change(TimeSpan.FromMilliseconds(1), Never).Should().BeTrue();
        }).WithTimeout("the test body");

        await second.Task.WithTimeout("the re-armed timer");
        loop.Context.Drain();
        fired.Should().Be(1);
    }

    [Fact]
    public async Task Change_FromItsOwnCallback_RearmsAOneShotTimer()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int count = 0;
        ITimer? timer = null;
        timer = loop.Context.TimeProvider.CreateTimer(
            _ =>
            {
                if (++count < 5)
                {
                    timer!.Change(TimeSpan.FromMilliseconds(1), Never).Should().BeTrue();
                }
                else
                {
                    done.SetResult();
                }
            },
            null,
            Never,
            Never);
        loop.Context.ArmedTimerCount.Should().Be(0, "an infinite due time leaves the timer disarmed");
        timer.Change(TimeSpan.FromMilliseconds(1), Never).Should().BeTrue();

        await done.Task.WithTimeout("five firings");
        loop.Context.Drain();
        count.Should().Be(5);
    }

    [Fact]
    public async Task Periodic_DisposedFromItsCallback_FiresExactlyThatManyTimes()
    {
        // Only time has to pass here: a fake clock moves it on a period at a time, and then well past the disposal.
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        var sentinel = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var ticked = new SemaphoreSlim(0);
        int count = 0;
        ITimer? timer = null;
        timer = loop.Context.TimeProvider.CreateTimer(
            _ =>
            {
                if (++count == 5)
                {
                    timer!.Dispose();
                    loop.Context.TimeProvider.CreateTimer(_ => sentinel.SetResult(), null, TimeSpan.FromMilliseconds(20), Never);
                }

                ticked.Release();
            },
            null,
            TimeSpan.FromMilliseconds(1),
            TimeSpan.FromMilliseconds(1));

        for (int i = 1; i <= 5; i++)
        {
            clock.Advance(TimeSpan.FromMilliseconds(1));
            (await ticked.WaitAsync(TestTimeout.Unexpected)).Should().BeTrue($"period {i} fires");
        }

        clock.Advance(TimeSpan.FromMilliseconds(20)); // twenty more periods, had the timer not been disposed
        await sentinel.Task.WithTimeout("five periods and the sentinel");
        count.Should().Be(5);
    }

    [Fact]
    public async Task Periodic_LoopHeldForManyPeriods_QueuesOneFiringAndSkipsTheMissedTicks()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        var first = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        LoopTimer timer;
        long released;
        int pendingWhileHeld;
        using (loop.Context.PauseLoop())
        {
            long start = Stopwatch.GetTimestamp();
            timer = (LoopTimer)loop.Context.TimeProvider.CreateTimer(
                _ =>
                {
                    log.Add("tick");
                    first.TrySetResult(0);
                },
                null,
                TimeSpan.FromMilliseconds(1),
                TimeSpan.FromMilliseconds(2));
            WaitUntilPassed(start, TimeSpan.FromMilliseconds(60)); // 30 periods
            WaitUntil(() => loop.Context.TimersDueFlag, "the alarm to raise the flag");
            pendingWhileHeld = loop.Context.GetSnapshot().PendingPerLevel.Sum();
            released = Stopwatch.GetTimestamp();
        }

        await first.Task.WithTimeout("the first tick");
        timer.Dispose();
        pendingWhileHeld.Should().Be(0, "firings are queued by the loop, not by the alarm");
        timer.Due.Should().BeGreaterThan(released, "a timer that fell behind is re-armed a period after it was found late, not due + period");
    }

    [Fact]
    public async Task Callback_Throws_GoesToUnhandledException()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var seen = new TaskCompletionSource<(Exception Error, int Level)>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.UnhandledException += (_, e) =>
        {
            e.Handled = true;
            seen.TrySetResult((e.Exception, e.Level));
        };
        loop.Context.GetTimeProvider(0).CreateTimer(_ => throw new InvalidTimeZoneException("boom"), null, TimeSpan.Zero, Never);

        var (error, level) = await seen.Task.WithTimeout("the handler");
        error.Should().BeOfType<InvalidTimeZoneException>();
        level.Should().Be(0);
    }

    [Fact]
    public async Task Callback_RunsInTheExecutionContextCapturedAtCreation()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var local = new AsyncLocal<string>();
        var seen = new TaskCompletionSource<(string? Flowed, string? Suppressed)>(TaskCreationOptions.RunContinuationsAsynchronously);
        string? flowed = null;
        local.Value = "captured";
        loop.Context.TimeProvider.CreateTimer(_ => flowed = local.Value, null, TimeSpan.Zero, Never);
        using (ExecutionContext.SuppressFlow())
        {
            loop.Context.TimeProvider.CreateTimer(_ => seen.SetResult((flowed, local.Value)), null, TimeSpan.FromMilliseconds(5), Never);
        }

        (await seen.Task.WithTimeout("the timers")).Should().Be(("captured", null));
    }

    [Fact]
    public async Task ArmedWhenTheContextFinishes_IsDroppedAndReported()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "finishing" });
        var dropped = new List<WorkDroppedEventArgs>();
        loop.Context.WorkDropped += (_, e) => dropped.Add(e);
        int fired = 0;
        ITimer armed = loop.Context.GetTimeProvider(0).CreateTimer(_ => fired++, null, TimeSpan.FromHours(1), Never);
        ITimer disarmed = loop.Context.TimeProvider.CreateTimer(_ => fired++, null, Never, Never);

        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish");

        dropped.Should().ContainSingle();
        dropped[0].Reason.Should().Be(DropReason.TimerArmedAtFinish);
        dropped[0].State.Should().BeSameAs(armed);
        dropped[0].Level.Should().Be(0);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(1);
        fired.Should().Be(0);

        armed.Change(TimeSpan.Zero, Never).Should().BeFalse("the context finished");
        disarmed.Change(TimeSpan.Zero, Never).Should().BeFalse("the context finished");
        armed.Dispose();
    }

    [Fact]
    public async Task CreateTimer_AfterTheContextFinished_ThrowsObjectDisposedNamingTheContext()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "gone" });
        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish");

        loop.Context.Invoking(c => c.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.Zero, Never))
            .Should().Throw<ObjectDisposedException>().WithMessage("*'gone'*");
        loop.Context.Invoking(c => c.GetTimeProvider(0).CreateTimer(_ => { }, null, Never, Never))
            .Should().Throw<ObjectDisposedException>();
    }

    [Fact]
    public async Task Timers_DoNotKeepTheLoopAlive()
    {
        var loop = new PriorityContextThread();
        using ITimer timer = loop.Context.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromHours(1), TimeSpan.FromHours(1));
        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish although a timer is armed");
        loop.Context.State.Should().Be(PrioritySchedulerState.Completed);
        loop.Context.ArmedTimerCount.Should().Be(0);
    }

    [Fact]
    public void Run_EntryAwaitsATimerOnAnIdleLoop_ParksUntilDueAndWakesUp()
    {
        var order = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            order.Add("before");
            await Task.Delay(TimeSpan.FromMilliseconds(20), context.TimeProvider);
            order.Add($"after:{SynchronizationContext.Current is PrioritySynchronizationContext}");
        }), "PriorityContext.Run");

        order.Should().Equal("before", "after:True");
    }
}
