using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Checkpoints;

/// <summary>
/// <c>await Checkpoint()</c> and <c>ShouldYield</c>: they yield exactly when work waits at a higher level, or when the running item has
/// used up its time quota and other work waits; a yield puts the rest of the method at the back of its own level. The quota is driven
/// by <c>TickTimeSlice</c> with made-up timestamps (no timing), as the slice clock drives it in production.
/// </summary>
public class CheckpointTests
{
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(10);
    private static readonly long SliceTicks = (long)(Slice.TotalSeconds * Stopwatch.Frequency);

    private static PriorityContextOptions Options => new() { Levels = 3, TimeSlice = Slice, TimeSliceDrivenByTests = true };

    [Fact]
    public void Checkpoint_NothingWaitingAbove_CompletesAtOnce_EvenWithWorkAtAndBelowItsLevel()
    {
        var ran = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            await Prioritize(1);
            PriorityContext.Current!.GetSynchronizationContext(1).Post(_ => ran.Add("level 1 item"), null);
            PriorityContext.Current!.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);

            ShouldYield.Should().BeFalse("nothing waits above level 1 and the quota is not used up");
            Checkpoint().GetAwaiter().IsCompleted.Should().BeTrue();
            await Checkpoint();
            ran.Add("after checkpoint");
            PriorityContext.CurrentLevel.Should().Be(1);
        }, Options), "PriorityContext.Run");

        ran.Should().Equal("after checkpoint", "level 1 item", "level 0 item");
    }

    [Fact]
    public void Checkpoint_WorkWaitingAbove_YieldsToTheBackOfItsOwnLevel()
    {
        var ran = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            await Prioritize(1);
            PriorityContext context = PriorityContext.Current!;
            context.GetSynchronizationContext(1).Post(_ => ran.Add("older level 1 item"), null);
            context.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);
            context.GetSynchronizationContext(2).Post(_ => ran.Add("level 2 item"), null);

            ShouldYield.Should().BeTrue("an item waits at level 2");
            context.ShouldYield.Should().BeTrue("the instance property asks the same");
            await Checkpoint();
            ran.Add("after checkpoint");
            PriorityContext.CurrentLevel.Should().Be(1, "a checkpoint never changes the level");
            ShouldYield.Should().BeFalse("the level-2 item has run");
        }, Options), "PriorityContext.Run");

        ran.Should().Equal("level 2 item", "older level 1 item", "after checkpoint", "level 0 item");
    }

    [Fact]
    public void Checkpoint_SliceUsedUpAndOtherWorkWaiting_YieldsToTheBackOfItsLevel()
    {
        var ran = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            await Prioritize(1);
            PriorityContext context = PriorityContext.Current!;
            context.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);
            context.GetSynchronizationContext(1).Post(_ => ran.Add("older level 1 item"), null);

            context.TickTimeSlice(1_000).Should().BeTrue("the loop is running, not parked");
            context.TickTimeSlice(1_000 + SliceTicks - 1);
            ShouldYield.Should().BeFalse("one tick short of a whole slice");

            context.TickTimeSlice(1_000 + SliceTicks);
            ShouldYield.Should().BeTrue("the item has run a whole slice and others wait");
            await Checkpoint();
            ran.Add("after checkpoint");

            // The rest of the method is a new item: its quota starts afresh, and the flag raised for the old item is not believed.
            context.GetSynchronizationContext(0).Post(_ => ran.Add("second level 0 item"), null);
            ShouldYield.Should().BeFalse("the quota was used up by the previous item, not this one");
            context.SliceExpiredFlag(0).Should().Be(0, "a checkpoint clears a flag raised for an item that has ended");
        }, Options), "PriorityContext.Run");

        // Strict priority: the continuation at level 1 still runs before level 0; it went behind the older level-1 item.
        ran.Should().Equal("older level 1 item", "after checkpoint", "level 0 item", "second level 0 item");
    }

    [Fact]
    public void Checkpoint_SliceUsedUpButNothingWaiting_DoesNotYield_AndLeavesTheFastPathToTheChecksThatFollow()
    {
        // C1: a raise is for an item over its quota while work may wait; a checkpoint that finds nothing waiting clears it (and the
        // stale mask bits), so the checkpoints that follow read a 0 flag and take the fast path; the clock raises it again at the
        // first tick after work is queued.
        var ran = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            context.TickTimeSlice(0);
            context.TickTimeSlice(10 * SliceTicks); // raised or not, depending on a stale bit of the entry's own level

            ShouldYield.Should().BeFalse("nothing else waits: yielding would only cost a lap");
            context.SliceExpiredFlag(0).Should().Be(0, "a checkpoint that finds nothing waiting clears the flag");
            Checkpoint().GetAwaiter().IsCompleted.Should().BeTrue();
            await Checkpoint();
            ran.Add("after checkpoint");

            context.TickTimeSlice(11 * SliceTicks);
            context.SliceExpiredFlag(0).Should().Be(0, "no level's bit is set (the checkpoint cleared the stale one): no raise");

            context.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);
            ShouldYield.Should().BeFalse("the flag is raised by the clock's next tick, not by the post");
            context.TickTimeSlice(12 * SliceTicks);
            context.SliceExpiredFlag(0).Should().Be(context.Threads[0].DispatchCount);
            ShouldYield.Should().BeTrue("now another item waits, and this item is still over its quota");
        }, Options), "PriorityContext.Run");

        ran.Should().Equal("after checkpoint", "level 0 item");
    }

    [Fact]
    public void Checkpoint_SliceClockDormantSentinel_IsClearedByTheNextCheckpoint_WhichDoesNotYieldForIt()
    {
        // S1: a clock that sleeps leaves the sentinel in every watched loop's flag; the next checkpoint clears it (and wakes the
        // clock); a checkpoint that must yield to work above still yields.
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            await Prioritize(1);
            PriorityContext context = PriorityContext.Current!;
            context.MarkSliceClockDormant();
            context.SliceExpiredFlag(0).Should().Be(PriorityContext.SliceClockDormant);
            ShouldYield.Should().BeFalse("the sentinel is not a used-up quota");
            context.SliceExpiredFlag(0).Should().Be(0, "the checkpoint cleared the sentinel");

            context.MarkSliceClockDormant();
            context.GetSynchronizationContext(2).Post(_ => { }, null);
            ShouldYield.Should().BeTrue("work waits above: that decides first");
            await Checkpoint();
            context.MarkSliceClockDormant();
            await Checkpoint();
            context.SliceExpiredFlag(0).Should().Be(0);
        }, Options), "PriorityContext.Run");
    }

    [Fact]
    public void TimeSliceOff_CheckpointYieldsOnlyToHigherLevels()
    {
        var options = Options;
        options.TimeSlice = null;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            context.GetSynchronizationContext(0).Post(_ => { }, null);
            context.TickTimeSlice(0);
            context.TickTimeSlice(long.MaxValue / 2);
            ShouldYield.Should().BeFalse("no quota: only work at a higher level makes a checkpoint yield");
        }, options), "PriorityContext.Run");
    }

    [Fact]
    public void Checkpoint_ManyYields_KeepFifoWithinTheLevel()
    {
        // Three workers at level 1 each checkpoint after every step while a level-2 item is queued each time: every checkpoint
        // yields, and the workers interleave in the order they queued (round robin), never overtaking each other.
        var steps = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            await Prioritize(1);
            var workers = new List<Task>();
            for (int w = 0; w < 3; w++)
            {
                workers.Add(Worker($"w{w}"));
            }

            await Task.WhenAll(workers);
        }, Options), "PriorityContext.Run");

        var expected = new List<string>();
        for (int step = 0; step < 4; step++)
        {
            for (int w = 0; w < 3; w++)
            {
                expected.Add($"w{w}:{step}");
            }
        }

        steps.Where(s => s[0] == 'w').Should().Equal(expected);
        steps.Count(s => s == "urgent").Should().Be(12);

        async Task Worker(string name)
        {
            await Yield(); // start all three first, in order, at the back of level 1
            for (int step = 0; step < 4; step++)
            {
                steps.Add($"{name}:{step}");
                PriorityContext.Current!.GetSynchronizationContext(2).Post(_ => steps.Add("urgent"), null);
                await Checkpoint();
            }
        }
    }

    [Fact]
    public void Checkpoint_DueTimerAboveTheCallersLevel_RunsFirst()
    {
        var ran = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            await Prioritize(2);
            using ITimer timer = context.TimeProvider.CreateTimer(_ => ran.Add("timer at level 2"), null, TimeSpan.Zero, Timeout.InfiniteTimeSpan);
            await Prioritize(1);
            await Checkpoint(); // the timer was due before it: it is queued at level 2 and runs first
            ran.Add("after checkpoint");
        }, Options), "PriorityContext.Run");

        ran.Should().Equal("timer at level 2", "after checkpoint");
    }

    [Fact]
    public void Checkpoint_OutsideAnyContext_Throws()
    {
        Action checkpoint = () => Checkpoint();
        Func<bool> shouldYield = () => ShouldYield;

        checkpoint.Should().Throw<InvalidOperationException>().WithMessage("*Checkpoint*PriorityContext*");
        shouldYield.Should().Throw<InvalidOperationException>().WithMessage("*ShouldYield*PriorityContext*");
    }

    [Fact]
    public async Task InstanceCheckpoint_FromOutsideThatContext_Throws()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "the loop" });
        await using var disposeLoop = loop.BoundedDisposal();
        Action checkpoint = () => loop.Context.Checkpoint();
        Func<bool> shouldYield = () => loop.Context.ShouldYield;
        checkpoint.Should().Throw<InvalidOperationException>().WithMessage("*Checkpoint*");
        shouldYield.Should().Throw<InvalidOperationException>().WithMessage("*ShouldYield*");

        // From inside another context: named in the message.
        TestTimeout.OnOwnThread(() => PriorityContext.Run(
            () =>
            {
                checkpoint.Should().Throw<InvalidOperationException>().WithMessage("*the loop*the other*");
            },
            new PriorityContextOptions { Name = "the other" }), "PriorityContext.Run");

        // From inside its own context: fine.
        bool inside = await loop.Context.RunOn(1, async () =>
        {
            await loop.Context.Checkpoint();
            return loop.Context.ShouldYield;
        }).WithTimeout("the checkpoint");
        inside.Should().BeFalse();
    }

    [Fact]
    public async Task Checkpoint_ContinuationDroppedWhenTheContextFaults_ThrowsObjectDisposed()
    {
        // The checkpoint queues behind a level-2 item that faults the loop: its continuation is dropped, resumes on the thread pool,
        // and GetResult throws rather than running the rest of the method off the loop.
        Task? pending = null;
        Action run = () => TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext.Current!.GetSynchronizationContext(2).Post(_ => throw new InvalidTimeZoneException("the fault"), null);
            pending = Body();

            static async Task Body()
            {
                await Checkpoint();
                throw new InvalidOperationException("the rest of the method must not run");
            }
        }, Options), "PriorityContext.Run");

        run.Should().Throw<InvalidTimeZoneException>();
        Func<Task> awaitPending = () => pending!.WithTimeout("the dropped continuation");
        await awaitPending.Should().ThrowAsync<ObjectDisposedException>();
    }

    [Fact]
    public void TickTimeSlice_ItemsKeepStarting_NeverRaisesTheFlag()
    {
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            for (int i = 0; i < 10; i++)
            {
                context.TickTimeSlice(i * SliceTicks); // a slice apart, but a new item each time
                await Yield();
            }

            context.SliceExpiredFlag(0).Should().Be(0);
        }, Options), "PriorityContext.Run");
    }

    [Fact]
    public async Task SliceClock_Dormant_WakeOfAParkedLoopLeavesItAsleep_AndTheFirstCheckpointWakesIt()
    {
        // S1 with the real clock: the loop's wake-up does nothing for the clock; the sentinel waits in the loop's flag for the first
        // checkpoint, which wakes the clock. Another test's busy loop may keep the clock awake; then only the checks that hold
        // regardless are made.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeSlice = TimeSpan.FromMilliseconds(1) });
        await using var disposeLoop = loop.BoundedDisposal();
        await loop.Context.RunOn(0, () => { }).WithTimeout("the first item");
        loop.Context.WaitUntilParked();
        bool dormant = WaitUntilSliceClockDormant();
        long flagAtStart = 0;
        long flagAfterCheckpoint = 0;
        bool clockDormantAfterCheckpoint = true;
        await loop.Context.RunOn(0, () =>
        {
            flagAtStart = loop.Context.SliceExpiredFlag(0);
            var deadline = Stopwatch.StartNew();
            do
            {
                _ = ShouldYield; // the first one wakes a sleeping clock; a clock about to sleep finds this loop awake and ticks on
                clockDormantAfterCheckpoint = PriorityAsync.Internal.SliceClock.Shared.IsDormant;
            }
            while (clockDormantAfterCheckpoint && deadline.Elapsed < TimeSpan.FromSeconds(2));
            flagAfterCheckpoint = loop.Context.SliceExpiredFlag(0);
        }).WithTimeout("the item after the wake-up");

        clockDormantAfterCheckpoint.Should().BeFalse("a watched loop's checkpoint found the clock asleep, or it was awake already (S1)");
        if (dormant)
        {
            flagAtStart.Should().Be(PriorityContext.SliceClockDormant, "the clock left the sentinel before it slept, and the wake-up did not touch it");
        }

        flagAfterCheckpoint.Should().NotBe(PriorityContext.SliceClockDormant, "the checkpoint cleared the sentinel, and the clock, awake, does not write it while this loop runs");
    }

    private static bool WaitUntilSliceClockDormant()
    {
        var dormantBy = Stopwatch.StartNew();
        while (!PriorityAsync.Internal.SliceClock.Shared.IsDormant)
        {
            if (dormantBy.Elapsed > TimeSpan.FromSeconds(2))
            {
                return false; // other tests' busy loops keep it awake
            }

            Thread.Sleep(1); // the clock's next tick finds every loop parked
        }

        return true;
    }

    [Fact]
    public async Task SliceClock_AfterTheLoopParked_LongItemWithOthersWaiting_IsToldToYield()
    {
        // The real slice clock (1 ms slices): an item that spins until ShouldYield, with another item waiting, is eventually told to
        // yield. No timing is asserted; the test's own timeout bounds a clock that never raises the flag.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeSlice = TimeSpan.FromMilliseconds(1) });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();

        // Parked first: unless another test's loop is awake, the slice clock goes dormant, and the post below must wake it (S1 in
        // Checkpoints/SliceClock.cs); a lost wake-up would leave the spinning item without a flag until the test's timeout.
        loop.Context.WaitUntilParked();
        var dormantBy = Stopwatch.StartNew();
        while (!PriorityAsync.Internal.SliceClock.Shared.IsDormant && dormantBy.Elapsed < TimeSpan.FromSeconds(2))
        {
            Thread.Sleep(1); // the clock's next tick finds every loop parked (other tests' busy loops may keep it awake: then go on)
        }
        await loop.Context.RunOn(0, async () =>
        {
            loop.Context.GetSynchronizationContext(0).Post(_ => ran.Add("waiting item"), null);
            var deadline = Stopwatch.StartNew();
            while (!ShouldYield)
            {
                if (deadline.Elapsed > TestTimeout.Unexpected)
                {
                    throw new TimeoutException("the slice clock never raised the quota flag");
                }

                Thread.SpinWait(100);
            }

            await Checkpoint();
            ran.Add("after checkpoint");
        }).WithTimeout("the spinning item");

        ran.Should().Equal("waiting item", "after checkpoint");
    }
}
