using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Timers;

/// <summary>
/// <see cref="VirtualTimeProvider"/>: the clock alone (Advance fires in due order, each timer with the clock at its due time), and a
/// loop that drives it ([V-ADVANCE], [V-BLIND], [V-WAKE] in docs/design.md): the loop jumps the clock to its earliest timer only when nothing is
/// runnable and no hold is active, never past it; work on the loop that advances the clock is a simulated core. Every result here is
/// exact: nothing depends on how fast the machine runs the test.
/// </summary>
public class VirtualTimeProviderTests
{
    private static readonly TimeSpan Second = TimeSpan.FromSeconds(1);

    // ---- The clock alone ------------------------------------------------------------------------------------------------

    [Fact]
    public void Advance_TimersOnTheWay_FireInDueOrderEachWithTheClockAtItsDueTime_TiesInArmingOrder()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<(string Name, TimeSpan At)>();
        using ITimer c = clock.CreateTimer(_ => fired.Add(("c", clock.Elapsed)), null, 3 * Second, Timeout.InfiniteTimeSpan);
        using ITimer a = clock.CreateTimer(_ => fired.Add(("a", clock.Elapsed)), null, Second, Timeout.InfiniteTimeSpan);
        using ITimer b1 = clock.CreateTimer(_ => fired.Add(("b1", clock.Elapsed)), null, 2 * Second, Timeout.InfiniteTimeSpan);
        using ITimer b2 = clock.CreateTimer(_ => fired.Add(("b2", clock.Elapsed)), null, 2 * Second, Timeout.InfiniteTimeSpan);

        clock.Advance(TimeSpan.FromMilliseconds(2500));

        fired.Should().Equal(("a", Second), ("b1", 2 * Second), ("b2", 2 * Second));
        clock.Elapsed.Should().Be(TimeSpan.FromMilliseconds(2500), "the clock ends where it was told to go");
        clock.GetUtcNow().Should().Be(VirtualTimeProvider.DefaultStart + TimeSpan.FromMilliseconds(2500));
        clock.GetTimestamp().Should().Be(clock.GetUtcNow().UtcTicks, "timestamps are UTC ticks");
        clock.TimestampFrequency.Should().Be(TimeSpan.TicksPerSecond);

        clock.Advance(Second);
        fired.Should().HaveCount(4).And.EndWith(("c", 3 * Second));
    }

    [Fact]
    public void Advance_PeriodicTimer_FiresOncePerPeriodItPasses()
    {
        var clock = new VirtualTimeProvider(new DateTimeOffset(2030, 6, 1, 12, 0, 0, TimeSpan.FromHours(2)));
        var fired = new List<TimeSpan>();
        using ITimer timer = clock.CreateTimer(_ => fired.Add(clock.Elapsed), null, Second, 2 * Second);

        clock.Advance(TimeSpan.FromSeconds(6));

        fired.Should().Equal(Second, 3 * Second, 5 * Second);
        clock.Start.Should().Be(new DateTimeOffset(2030, 6, 1, 10, 0, 0, TimeSpan.Zero));
        timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan).Should().BeTrue();
        clock.Advance(TimeSpan.FromSeconds(10));
        fired.Should().HaveCount(3, "a disarmed timer does not fire");
    }

    [Fact]
    public void CreateTimer_DueNow_FiresAtTheNextAdvanceWithoutTheClockMoving_NeverInsideTheCall()
    {
        var clock = new VirtualTimeProvider();
        int fired = 0;
        using ITimer timer = clock.CreateTimer(_ => fired++, null, TimeSpan.Zero, Timeout.InfiniteTimeSpan);
        fired.Should().Be(0, "a callback never runs inside CreateTimer or Change");

        clock.Advance(TimeSpan.Zero);

        fired.Should().Be(1);
        clock.Elapsed.Should().Be(TimeSpan.Zero);
    }

    [Fact]
    public void Dispose_BeforeTheDueTime_NeverFires_AndChangeThenReturnsFalse()
    {
        var clock = new VirtualTimeProvider();
        int fired = 0;
        ITimer timer = clock.CreateTimer(_ => fired++, null, Second, Second);

        timer.Dispose();
        clock.Advance(TimeSpan.FromSeconds(5));

        fired.Should().Be(0);
        timer.Change(Second, Timeout.InfiniteTimeSpan).Should().BeFalse("as for the system timers");
        timer.Dispose(); // twice: nothing happens
    }

    [Fact]
    public void BadArguments_ThrowNamingTheValueAndTheRange()
    {
        var clock = new VirtualTimeProvider();

        FluentActions.Invoking(() => clock.Advance(TimeSpan.FromTicks(-1))).Should().Throw<ArgumentOutOfRangeException>()
            .Which.ParamName.Should().Be("delta");
        FluentActions.Invoking(() => clock.CreateTimer(_ => { }, null, TimeSpan.FromMilliseconds(-2), Timeout.InfiniteTimeSpan))
            .Should().Throw<ArgumentOutOfRangeException>().Which.Message.Should().Contain("dueTime").And.Contain("4294967294 ms");
        FluentActions.Invoking(() => clock.CreateTimer(_ => { }, null, Second, TimeSpan.FromDays(50)))
            .Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("period");
        FluentActions.Invoking(() => clock.CreateTimer(null!, null, Second, Second)).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void TimerCallback_RunsWithoutASynchronizationContext_InTheExecutionContextOfItsCreator()
    {
        var clock = new VirtualTimeProvider();
        var local = new AsyncLocal<string>();
        (SynchronizationContext? Context, string? Local) seen = default;
        local.Value = "creator";
        using ITimer timer = clock.CreateTimer(_ => seen = (SynchronizationContext.Current, local.Value), null, Second, Timeout.InfiniteTimeSpan);
        local.Value = "advancer";

        var advancerContext = new SynchronizationContext();
        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(advancerContext);
        try
        {
            clock.Advance(Second);
            SynchronizationContext.Current.Should().BeSameAs(advancerContext, "the advancer's context is given back");
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }

        seen.Should().Be(((SynchronizationContext?)null, "creator"), "as a system timer's callback runs on a pool thread, in its creator's ExecutionContext");
        local.Value.Should().Be("advancer");
    }

    [Fact]
    public void AdvanceFromCallback_MovesTheClockOn_AndTheOuterAdvanceEndsNoEarlierThanItsTarget()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<(string Name, TimeSpan At)>();
        using ITimer late = clock.CreateTimer(_ => fired.Add(("late", clock.Elapsed)), null, 5 * Second, Timeout.InfiniteTimeSpan);
        using ITimer nested = clock.CreateTimer(_ => clock.Advance(10 * Second), null, Second, Timeout.InfiniteTimeSpan);

        clock.Advance(2 * Second);

        fired.Should().Equal(("late", 5 * Second));
        clock.Elapsed.Should().Be(11 * Second, "the callback's advance went past the outer target; the clock never moves back");
    }

    // ---- A loop that drives it ([V-ADVANCE]) ---------------------------------------------------------------------------------------

    [Fact]
    public void Run_IdleLoop_JumpsToEachTimer_EveryTimerFiresWithTheClockAtItsDueTime_InDueOrder_ForEverySeed()
    {
        // Random delays and timers at random levels, armed from the loop at random points of a chain of items: each fires with the
        // clock exactly at its due time (a jump past it would show a later time), in due order (ties in arming order, whatever the
        // level: they come due at the same instant and queue in that order; strict priority then runs the higher level first only
        // among firings queued together, so the test keeps the levels of equal due times equal).
        for (int seed = 1; seed <= 40; seed++)
        {
            var random = new Random(seed);
            var clock = new VirtualTimeProvider();
            var expected = new List<(int Id, TimeSpan Due)>();
            var fired = new List<(int Id, TimeSpan At)>();
            int count = random.Next(1, 30);
            TestTimeout.OnOwnThread(
                () => PriorityContext.Run(
                    async () =>
                    {
                        var waits = new List<Task>();
                        for (int id = 0; id < count; id++)
                        {
                            TimeSpan due = clock.Elapsed + TimeSpan.FromMilliseconds(random.Next(0, 5) * 250); // ties are common
                            expected.Add((id, due));
                            waits.Add(Wait(id, due - clock.Elapsed));
                            if (random.Next(3) == 0)
                            {
                                await Priority.Yield(); // arm the rest from a later item, at the same instant
                            }
                        }

                        await Task.WhenAll(waits);
                    },
                    new PriorityContextOptions { Levels = 1, TimeProvider = clock }),
                $"seed {seed}");

            fired.Should().Equal(
                expected.OrderBy(e => e.Due).ThenBy(e => e.Id).Select(e => (e.Id, e.Due)),
                $"every timer fires at its due time, in due order (seed {seed}; replay it with that seed)");

            async Task Wait(int id, TimeSpan delay)
            {
                await Priority.Delay(delay);
                fired.Add((id, clock.Elapsed));
            }
        }
    }

    [Fact]
    public void Run_WorkRunnable_TheClockStandsStill_TheTimerFiresOnlyOnceNothingIsLeft()
    {
        var clock = new VirtualTimeProvider();
        var log = new List<string>();
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                async () =>
                {
                    Task timer = Tick();
                    for (int i = 0; i < 1000; i++)
                    {
                        await Priority.Yield(); // 1,000 items, each runnable at once: no idle moment, so no jump
                        if (clock.Elapsed != TimeSpan.Zero)
                        {
                            log.Add($"the clock moved to {clock.Elapsed} at item {i}");
                        }
                    }

                    log.Add($"chain done at {clock.Elapsed}");
                    await timer;
                },
                new PriorityContextOptions { Levels = 2, TimeProvider = clock }),
            nameof(Run_WorkRunnable_TheClockStandsStill_TheTimerFiresOnlyOnceNothingIsLeft));

        log.Should().Equal($"chain done at {TimeSpan.Zero}", $"timer at {TimeSpan.FromTicks(1)}");

        async Task Tick()
        {
            await Priority.Delay(TimeSpan.FromTicks(1)); // the earliest possible timer, at level 0 below the chain
            log.Add($"timer at {clock.Elapsed}");
        }
    }

    [Fact]
    public void Run_ItemAdvancesTheClock_TimersDueMeanwhileFireAfterIt_InDueOrderAtTheirLevels()
    {
        // A simulated core: the item "runs" 100 ms of CPU by advancing the clock; the timers that came due meanwhile are queued after
        // it, in due order, and strict priority runs the level-2 one first.
        var clock = new VirtualTimeProvider();
        var log = new List<string>();
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                async () =>
                {
                    PriorityContext context = PriorityContext.Current!;
                    Task low = context.RunOn(1, async () =>
                    {
                        await Priority.Delay(TimeSpan.FromMilliseconds(10));
                        log.Add($"level 1 timer (due 10 ms) ran at {clock.Elapsed.TotalMilliseconds} ms");
                    });
                    Task high = context.RunOn(2, async () =>
                    {
                        await Priority.Delay(TimeSpan.FromMilliseconds(30));
                        log.Add($"level 2 timer (due 30 ms) ran at {clock.Elapsed.TotalMilliseconds} ms");
                    });
                    await Priority.Yield(); // both delays are armed (levels 1 and 2 ran before this level-0 continuation)
                    clock.Advance(TimeSpan.FromMilliseconds(100));
                    log.Add($"CPU part ended at {clock.Elapsed.TotalMilliseconds} ms");
                    await Task.WhenAll(low, high);
                },
                new PriorityContextOptions { Levels = 3, TimeProvider = clock }),
            nameof(Run_ItemAdvancesTheClock_TimersDueMeanwhileFireAfterIt_InDueOrderAtTheirLevels));

        log.Should().Equal(
            "CPU part ended at 100 ms",
            "level 2 timer (due 30 ms) ran at 100 ms",
            "level 1 timer (due 10 ms) ran at 100 ms");
    }

    [Fact]
    public void Run_AnHourOfLeaseRenewals_RunsEveryRenewalAtItsMinuteWithoutWaiting()
    {
        // What a user's test looks like: the code under test waits a minute between renewals, 60 times, and the test runs it exactly.
        var clock = new VirtualTimeProvider();
        var renewedAt = new List<TimeSpan>();
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                async () =>
                {
                    for (int i = 0; i < 60; i++)
                    {
                        await Priority.Delay(TimeSpan.FromMinutes(1));
                        renewedAt.Add(clock.Elapsed);
                    }
                },
                new PriorityContextOptions { TimeProvider = clock }),
            nameof(Run_AnHourOfLeaseRenewals_RunsEveryRenewalAtItsMinuteWithoutWaiting));

        renewedAt.Should().Equal(Enumerable.Range(1, 60).Select(m => TimeSpan.FromMinutes(m)));
    }

    [Fact]
    public void Run_TaskDelayOnTheClockItself_ResumesOnTheLoopAtItsLevel_AtItsDueTime()
    {
        // A timer of the clock itself (not of the context's TimeProvider) fires while the loop jumps, with no SynchronizationContext:
        // the awaiting method is posted back to its level, as a system timer's completion would be.
        var clock = new VirtualTimeProvider();
        (int Level, TimeSpan At) resumed = default;
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                async () =>
                {
                    await Priority.Prioritize(1);
                    await Task.Delay(TimeSpan.FromSeconds(30), clock);
                    resumed = (Priority.CurrentLevel, clock.Elapsed);
                },
                new PriorityContextOptions { Levels = 2, TimeProvider = clock }),
            nameof(Run_TaskDelayOnTheClockItself_ResumesOnTheLoopAtItsLevel_AtItsDueTime));

        resumed.Should().Be((1, TimeSpan.FromSeconds(30)));
    }

    [Fact]
    public void Run_CallbackOfAClockTimerThrowsDuringTheJump_TheContextFaultsWithIt()
    {
        var clock = new VirtualTimeProvider();
        var boom = new InvalidOperationException("boom");
        Exception? thrown = null;
        TestTimeout.OnOwnThread(
            () =>
            {
                try
                {
                    PriorityContext.Run(
                        async () =>
                        {
                            using ITimer timer = clock.CreateTimer(_ => throw boom, null, Second, Timeout.InfiniteTimeSpan);
                            await Priority.Delay(TimeSpan.FromMinutes(1));
                        },
                        new PriorityContextOptions { TimeProvider = clock });
                }
                catch (Exception ex)
                {
                    thrown = ex;
                }
            },
            nameof(Run_CallbackOfAClockTimerThrowsDuringTheJump_TheContextFaultsWithIt));

        thrown.Should().BeSameAs(boom);
        clock.Elapsed.Should().Be(Second, "the loop stopped at the failure, before its next jump");
    }

    [Fact]
    public void Run_AgingPolicy_MeasuresWaitsOnTheVirtualClock_TheLowItemRunsExactlyWhenItsBoundHasPassed()
    {
        // The policies read the loop's clock: on a virtual one, aging sees the virtual wait. A level-1 chain that never empties, each
        // item 100 ms of simulated CPU; a level-0 item queued at 0 with a 1 s bound expires once the clock has passed 1 s: after the
        // item that ends at 1.1 s (at 1.0 s its deadline has not yet passed: it must be strictly earlier than now).
        var clock = new VirtualTimeProvider();
        var chain = 0;
        (int ChainItems, TimeSpan At) low = default;
        TimeSpan bound = Second;
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    PriorityContext context = PriorityContext.Current!;
                    context.GetSynchronizationContext(0).Post(_ => low = (chain, clock.Elapsed), null);
                    SendOrPostCallback? step = null;
                    step = _ =>
                    {
                        clock.Advance(TimeSpan.FromMilliseconds(100));
                        if (++chain < 20)
                        {
                            context.GetSynchronizationContext(1).Post(step!, null);
                        }
                    };
                    context.GetSynchronizationContext(1).Post(step, null);
                },
                new PriorityContextOptions { Levels = 2, DefaultLevel = 1, TimeProvider = clock, Policy = PriorityPolicy.Aging(bound, bound) }),
            nameof(Run_AgingPolicy_MeasuresWaitsOnTheVirtualClock_TheLowItemRunsExactlyWhenItsBoundHasPassed));

        low.Should().Be((11, TimeSpan.FromMilliseconds(1100)));
        chain.Should().Be(20);
    }

    [Fact]
    public async Task TimeSlice_OnAVirtualClock_IsOff_ACheckpointYieldsOnlyToHigherLevels()
    {
        // The quota measures the loop thread's real run time; on virtual time it would make the schedule depend on the machine.
        var clock = new VirtualTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeProvider = clock, TimeSlice = PriorityContextOptions.MinTimeSlice });
        await using var disposeLoop = loop.BoundedDisposal();

        bool shouldYield = await loop.Context.RunOn(0, async () =>
        {
            await Task.CompletedTask;
            loop.Context.GetSynchronizationContext(0).Post(_ => { }, null); // work waits at the same level
            var realTime = System.Diagnostics.Stopwatch.StartNew();
            while (realTime.Elapsed < TimeSpan.FromMilliseconds(20))
            {
                Thread.SpinWait(100); // 20 quotas of real run time, or more on a busy machine
            }

            return Priority.ShouldYield;
        }).WithTimeout("the long item");

        shouldYield.Should().BeFalse("no quota runs out on a virtual clock: only a higher level makes a checkpoint yield");
    }

    // ---- Work from other threads ([V-BLIND]), waking a waiting loop ([V-WAKE]) ------------------------------------------------------

    [Fact]
    public async Task HoldAutoAdvance_WorkFromAnotherThreadWhileHeld_ArrivesAtTheTimeItStarted_ThenTheLoopJumps()
    {
        var clock = new VirtualTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        var reply = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new List<string>();

        IDisposable hold = clock.HoldAutoAdvance();
        Task scenario = loop.Context.RunOn(0, async () =>
        {
            ValueTask timeout = Priority.Delay(TimeSpan.FromSeconds(10)); // armed: without the hold, an idle loop would jump to it
            int value = await reply.Task;                                  // work done elsewhere (another thread stands for real I/O)
            log.Add($"reply {value} at {clock.Elapsed}");
            await timeout;
            log.Add($"timeout at {clock.Elapsed}");
        });

        loop.Context.WaitUntilParked(); // idle with a timer armed, held: it waits instead of jumping
        clock.Elapsed.Should().Be(TimeSpan.Zero);
        reply.SetResult(42);
        await WaitUntil(() => log.Count == 1, "the reply");
        hold.Dispose(); // the last hold released: the waiting loop is woken and jumps
        await scenario.WithTimeout("the scenario");

        log.Should().Equal($"reply 42 at {TimeSpan.Zero}", $"timeout at {TimeSpan.FromSeconds(10)}");
    }

    [Fact]
    public async Task WithoutAHold_WorkFromAnotherThreadArrivesAfterTheJump_WhatTheLoopCannotSee()
    {
        // [V-BLIND], shown deterministically: the loop cannot know another thread is about to post, so it jumps to its timer first.
        var clock = new VirtualTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        var reply = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        TimeSpan repliedAt = TimeSpan.MinValue;

        Task scenario = loop.Context.RunOn(0, async () =>
        {
            ValueTask timeout = Priority.Delay(TimeSpan.FromSeconds(10));
            await reply.Task;
            repliedAt = clock.Elapsed;
            await timeout; // fired already
        });

        await WaitUntil(() => clock.Elapsed == TimeSpan.FromSeconds(10), "the idle loop to jump to its timer");
        reply.SetResult(42);
        await scenario.WithTimeout("the scenario");

        repliedAt.Should().Be(TimeSpan.FromSeconds(10), "the reply came from outside the loop and the clock: the jump overtook it");
    }

    [Fact]
    public async Task TimerArmedFromAnotherThread_WhileTheLoopWaitsWithNothingArmed_WakesItAndItJumpsToIt()
    {
        var clock = new VirtualTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        loop.Context.WaitUntilParked(); // nothing armed: the loop waits, as on any clock

        var fired = new TaskCompletionSource<(int Level, TimeSpan At)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using ITimer timer = loop.Context.GetTimeProvider(1).CreateTimer(
            _ => fired.TrySetResult((Priority.CurrentLevel, clock.Elapsed)), null, TimeSpan.FromMinutes(5), Timeout.InfiniteTimeSpan);

        (await fired.Task.WithTimeout("the timer armed from the test thread")).Should().Be((1, TimeSpan.FromMinutes(5)));
    }

    // ---- Misuse ------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task SecondContext_WhileTheFirstDrivesTheClock_ThrowsNamingBoth_AfterItFinished_TakesOver()
    {
        var clock = new VirtualTimeProvider();
        var first = new PriorityContextThread(new PriorityContextOptions { Name = "first", TimeProvider = clock });

        FluentActions.Invoking(() => new PriorityContextThread(new PriorityContextOptions { Name = "second", TimeProvider = clock }))
            .Should().Throw<ArgumentException>()
            .Where(e => e.ParamName == "TimeProvider" && e.Message.Contains("'first'") && e.Message.Contains("'second'") && e.Message.Contains("one loop at a time"));

        await first.DisposeOrFailAsync();
        var second = new PriorityContextThread(new PriorityContextOptions { Name = "second", TimeProvider = clock });
        await using var disposeSecond = second.BoundedDisposal();
        (await second.Context.RunOn(0, async () =>
        {
            await Priority.Delay(TimeSpan.FromHours(1));
            return clock.Elapsed;
        }).WithTimeout("the second loop's delay")).Should().Be(TimeSpan.FromHours(1), "the second loop drives the clock now");
    }

    [Fact]
    public void PriorityThreadPool_OnAVirtualClock_ThrowsArgumentExceptionSayingWhyAndWhatToUse()
    {
        FluentActions.Invoking(() => new PriorityThreadPool(new PriorityThreadPoolOptions { TimeProvider = new VirtualTimeProvider() }))
            .Should().Throw<ArgumentException>()
            .Where(e => e.ParamName == "TimeProvider" && e.Message.Contains("PriorityThreadPoolOptions.TimeProvider")
                && e.Message.Contains("PriorityContext") && e.Message.Contains("FakeTimeProvider"));
    }

    private static async Task WaitUntil(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out waiting for {what}.");
            }

            await Task.Delay(1);
        }
    }
}
