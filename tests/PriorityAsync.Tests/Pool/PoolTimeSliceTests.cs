using System.Collections.Concurrent;
using System.Diagnostics;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// The time quota on the pool (C1-N, C2-N, S1-N in Checkpoints/PriorityThreadPool.Checkpoint.cs): per thread, an item that has run a
/// whole slice yields at a checkpoint when its yield is what lets waiting work run (every thread busy, or work held at its own level by
/// the level's cap), and not otherwise. Driven by <c>TickTimeSlice</c> with made-up timestamps (no timing), as on the single loop.
/// </summary>
public class PoolTimeSliceTests
{
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(10);
    private static readonly long SliceTicks = (long)(Slice.TotalSeconds * Stopwatch.Frequency);

    private static PriorityThreadPoolOptions Options(int threads, int[]? caps = null) => new()
    {
        ThreadCount = threads,
        Levels = 2,
        MaxConcurrencyPerLevel = caps,
        TimeSlice = Slice,
        TimeSliceDrivenByTests = true,
        Name = "pool-slice",
    };

    [Fact]
    public async Task Checkpoint_OneThreadSliceUsedUpAndOtherWorkWaiting_YieldsToTheBackOfItsLevel()
    {
        var pool = new PriorityThreadPool(Options(threads: 1));
        await using var disposePool = pool.BoundedDisposal();
        var ran = new ConcurrentQueue<string>();
        await pool.InvokeAsync(async () =>
        {
            pool.GetSynchronizationContext(0).Post(_ => ran.Enqueue("other"), null);
            pool.TickTimeSlice(1_000).Should().BeTrue("the thread runs this item");
            pool.TickTimeSlice(1_000 + SliceTicks - 1);
            ShouldYield.Should().BeFalse("one tick short of a whole slice");

            pool.TickTimeSlice(1_000 + SliceTicks);
            ShouldYield.Should().BeTrue("a whole slice, the only thread busy, and work waits");
            await Checkpoint();
            ran.Enqueue("after");

            ShouldYield.Should().BeFalse("the rest of the method is a new item: the raise for the old one is not believed");
            pool.SliceExpiredFlag(0).Should().Be(0, "a checkpoint clears a flag raised for an item that has ended");
        }).WithTimeout("the body");

        ran.Should().Equal("other", "after");
    }

    [Fact]
    public async Task Checkpoint_EveryThreadBusy_YieldsToWorkThatWaitsForAThread()
    {
        var pool = new PriorityThreadPool(Options(threads: 2));
        await using var disposePool = pool.BoundedDisposal();
        var ran = new ConcurrentQueue<string>();
        using var release = new ManualResetEventSlim(false);
        using var entered = new ManualResetEventSlim(false);
        pool.GetSynchronizationContext(1).Post(_ =>
        {
            entered.Set();
            release.WaitOrFail("the body to release the other thread");
        }, null);
        entered.WaitOrFail("the other thread to be held");

        await pool.InvokeAsync(async () =>
        {
            pool.GetSynchronizationContext(0).Post(_ => ran.Enqueue("other"), null); // both threads busy: it waits
            pool.TickTimeSlice(0);
            pool.TickTimeSlice(SliceTicks);
            pool.SliceExpiredFlag(SchedulerThread.Current!.Index).Should().Be(SchedulerThread.Current!.DispatchCount, "this thread's item has run a slice");
            ShouldYield.Should().BeTrue("no idle thread will take the waiting item");
            await Checkpoint();
            ran.Enqueue("after");
            release.Set();
        }).WithTimeout("the body");

        ran.Should().Equal("other", "after");
    }

    [Fact]
    public async Task Checkpoint_OwnLevelAtItsCap_YieldsEvenWithAnIdleThread()
    {
        // Level 0 may use one thread, and this item holds it: the idle thread cannot take the waiting level-0 item; only a yield can.
        var pool = new PriorityThreadPool(Options(threads: 2, caps: [1, 2]));
        await using var disposePool = pool.BoundedDisposal();
        var ran = new ConcurrentQueue<string>();
        await pool.InvokeAsync(async () =>
        {
            pool.GetSynchronizationContext(0).Post(_ => ran.Enqueue("other"), null);
            pool.TickTimeSlice(0);
            pool.TickTimeSlice(SliceTicks);
            ShouldYield.Should().BeTrue("the waiting item is held by this level's cap, whose slot this item holds");
            await Checkpoint();
            ran.Enqueue("after");
        }, level: 0).WithTimeout("the body");

        ran.Should().Equal("other", "after");
    }

    [Fact]
    public async Task Checkpoint_WaitingWorkHeldByAnotherLevelsCap_DoesNotYield_AndClearsTheFlag()
    {
        // Every thread is busy, but the waiting item is at level 0, at its cap because of the other thread: this item's yield would
        // not let it run, so it goes on (and the flag is cleared, so the checkpoints that follow take the fast path).
        var pool = new PriorityThreadPool(Options(threads: 2, caps: [1, 2]));
        await using var disposePool = pool.BoundedDisposal();
        var ran = new ConcurrentQueue<string>();
        using var release = new ManualResetEventSlim(false);
        using var entered = new ManualResetEventSlim(false);
        pool.GetSynchronizationContext(0).Post(_ =>
        {
            entered.Set();
            release.WaitOrFail("the body to release the level-0 item");
        }, null);
        entered.WaitOrFail("the level-0 slot to be held");

        await pool.InvokeAsync(async () =>
        {
            pool.GetSynchronizationContext(0).Post(_ => ran.Enqueue("other"), null);
            pool.TickTimeSlice(0);
            pool.TickTimeSlice(SliceTicks);
            int index = SchedulerThread.Current!.Index;
            pool.SliceExpiredFlag(index).Should().NotBe(0, "the clock raises it: work may wait");
            ShouldYield.Should().BeFalse("the waiting item needs a level-0 slot, which this level-1 item does not hold");
            pool.SliceExpiredFlag(index).Should().Be(0, "the checkpoint clears the flag it did not act on");
            await Checkpoint();
            ran.Enqueue("after");
            release.Set();
        }, level: 1).WithTimeout("the body");

        await pool.InvokeAsync(() => Task.CompletedTask).WithTimeout("the pool to run the rest"); // level 0: after "other"
        ran.Should().Equal("after", "other");
    }

    [Fact]
    public async Task Checkpoint_NothingWaiting_DoesNotYield_AndClearsTheFlagAtEachRaise()
    {
        // On the pool a stale mask bit (this item's own level) is cleared only by the next dequeue (I1), not by a checkpoint: the clock
        // may raise the flag at every tick while it lasts, and each raise costs one slow checkpoint, which clears it and goes on.
        var pool = new PriorityThreadPool(Options(threads: 2));
        await using var disposePool = pool.BoundedDisposal();
        await pool.InvokeAsync(() =>
        {
            int index = SchedulerThread.Current!.Index;
            pool.TickTimeSlice(0);
            for (int tick = 10; tick < 13; tick++)
            {
                pool.TickTimeSlice(tick * SliceTicks); // raised or not, depending on the stale bit
                ShouldYield.Should().BeFalse("nothing else waits");
                pool.SliceExpiredFlag(index).Should().Be(0, "the checkpoint clears a raise it does not act on");
            }

            return Task.CompletedTask;
        }).WithTimeout("the body");
    }

    [Fact]
    public async Task Checkpoint_SliceClockDormantSentinel_IsClearedByTheNextCheckpoint_WhichDoesNotYieldForIt()
    {
        var pool = new PriorityThreadPool(Options(threads: 2));
        await using var disposePool = pool.BoundedDisposal();
        await pool.InvokeAsync(() =>
        {
            pool.MarkSliceClockDormant();
            int index = SchedulerThread.Current!.Index;
            pool.SliceExpiredFlag(index).Should().Be(PriorityContext.SliceClockDormant);
            ShouldYield.Should().BeFalse("the sentinel only wakes the clock");
            pool.SliceExpiredFlag(index).Should().Be(0, "the checkpoint cleared the sentinel of its own thread");
            pool.SliceExpiredFlag(1 - index).Should().Be(PriorityContext.SliceClockDormant, "another thread's flag is its own checkpoints' to clear");
            return Task.CompletedTask;
        }).WithTimeout("the body");
    }

    [Fact]
    public async Task Checkpoint_TimeSliceOff_YieldsOnlyToHigherLevels()
    {
        PriorityThreadPoolOptions options = Options(threads: 1);
        options.TimeSlice = null;
        var pool = new PriorityThreadPool(options);
        await using var disposePool = pool.BoundedDisposal();
        await pool.InvokeAsync(() =>
        {
            pool.GetSynchronizationContext(0).Post(_ => { }, null);
            pool.TickTimeSlice(0);
            pool.TickTimeSlice(long.MaxValue / 2);
            pool.SliceExpiredFlag(0).Should().Be(0);
            ShouldYield.Should().BeFalse("no quota");
            return Task.CompletedTask;
        }).WithTimeout("the body");
    }

    [Fact]
    public async Task SliceClock_LongItemOnEveryThreadWithOthersWaiting_IsToldToYield()
    {
        // The real slice clock (1 ms slices) watching a pool: an item that spins until ShouldYield, with another item waiting and the
        // only thread busy, is eventually told to yield. No timing is asserted; the test's timeout bounds a clock that never raises.
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, TimeSlice = TimeSpan.FromMilliseconds(1) });
        await using var disposePool = pool.BoundedDisposal();
        var ran = new ConcurrentQueue<string>();
        await pool.InvokeAsync(async () =>
        {
            pool.GetSynchronizationContext(0).Post(_ => ran.Enqueue("other"), null);
            var deadline = Stopwatch.StartNew();
            while (!ShouldYield)
            {
                deadline.Elapsed.Should().BeLessThan(TestTimeout.Unexpected, "the slice clock raises the flag of a thread whose item overran");
                Thread.SpinWait(100);
            }

            await Checkpoint();
            ran.Enqueue("after");
        }).WithTimeout("the spinning item");

        ran.Should().Equal("other", "after");
    }

    [Fact]
    public void Options_TimeSlice_SameDefaultAndRangeAsTheSingleLoop()
    {
        new PriorityThreadPoolOptions().TimeSlice.Should().Be(PrioritySchedulerOptions.DefaultTimeSlice);
        foreach (TimeSpan slice in new[] { TimeSpan.Zero, TimeSpan.FromMilliseconds(0.5), PrioritySchedulerOptions.MaxTimeSlice + TimeSpan.FromTicks(1) })
        {
            Action create = () => new PriorityThreadPool(new PriorityThreadPoolOptions { TimeSlice = slice }).Dispose();
            create.Should().Throw<ArgumentOutOfRangeException>()
                .Where(e => e.ParamName == "TimeSlice" && Equals(e.ActualValue, slice))
                .WithMessage("PriorityThreadPoolOptions.TimeSlice is *; it must be null (no quota) or between 00:00:00.0010000 and 00:01:00.*");
        }

        foreach (TimeSpan? slice in new TimeSpan?[] { null, PrioritySchedulerOptions.MinTimeSlice, PrioritySchedulerOptions.MaxTimeSlice })
        {
            var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, TimeSlice = slice });
            using var disposePool = pool.BoundedDisposal();
        }
    }
}
