using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// K-N for nested runs on a capped pool: a task inlined on a pool thread (RunSynchronously, Wait, an ExecuteSynchronously
/// continuation) and an inline Send borrow a slot at their level for their run only; the item they are nested in keeps its own, so its
/// level's cap still holds once they return. (An inline Prioritize moves the slot for good: PriorityThreadPoolTests.)
/// </summary>
public sealed class PoolNestedRunTests
{
    public enum InlineKind
    {
        RunSynchronously,
        Wait,
        ExecuteSynchronouslyContinuation,
    }

    /// <summary>The pool's running gauge (its per-level slot count in locked mode).</summary>
    private static int Running(PriorityThreadPool pool, int level) => pool.GetRunning(level);

    private static PriorityThreadPool CappedPool(string name, params int[] caps) =>
        new(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = caps.Length, MaxConcurrencyPerLevel = caps, Name = name });

    /// <summary>Runs an item at <paramref name="level"/> that holds one of the pool's threads (and a slot of the level) until
    /// <paramref name="gate"/> is set, or gives up after the usual timeout (so a failing test fails on its assertions, not by hanging).</summary>
    /// <returns>The blocker's thread, once it runs.</returns>
    private static Task<int> StartBlocker(PriorityThreadPool pool, int level, ManualResetEventSlim gate)
    {
        var started = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        pool.GetSynchronizationContext(level).Post(_ =>
        {
            started.SetResult(Environment.CurrentManagedThreadId);
            gate.Wait(TestTimeout.Unexpected);
        }, null);
        return started.Task.WithTimeout("the blocker to start");
    }

    [Theory]
    [InlineData(InlineKind.RunSynchronously)]
    [InlineData(InlineKind.Wait)]
    [InlineData(InlineKind.ExecuteSynchronouslyContinuation)]
    public async Task InlinedTask_AtAnotherLevel_UsesASlotThereForItsRunOnly_AndTheCallerKeepsItsOwn(InlineKind kind)
    {
        // Level 0 capped at 1, level 1 at 2. The other thread runs a blocker at level 1, so the task, once queued, can only run
        // inline (and Wait's inlining is not raced by a free thread). Should the task not be inlined, the blocker gives up after the
        // usual timeout and its thread runs the task: the assertions then fail instead of the test hanging.
        using var blockerGate = new ManualResetEventSlim();
        var pool = CappedPool($"nested-{kind}", 1, 2);
        await using var disposePool = pool.BoundedDisposal();
        await StartBlocker(pool, 1, blockerGate);

        var result = await pool.InvokeAsync(() =>
        {
            int callerThread = Environment.CurrentManagedThreadId;
            int taskThread = -1;
            (int, int) during = default;
            void Body()
            {
                taskThread = Environment.CurrentManagedThreadId;
                during = (Running(pool, 0), Running(pool, 1));
            }

            switch (kind)
            {
                case InlineKind.RunSynchronously:
                    new Task(Body).RunSynchronously(pool.GetScheduler(1));
                    break;
                case InlineKind.Wait:
                    var queued = new Task(Body);
                    queued.Start(pool.GetScheduler(1));
#pragma warning disable PA0002 // the test is about Wait's inlining of a queued task on a pool thread (only an untimed Wait inlines)
                    queued.Wait();
#pragma warning restore PA0002
                    break;
                case InlineKind.ExecuteSynchronouslyContinuation:
                    var antecedent = new TaskCompletionSource();
                    Task continuation = antecedent.Task.ContinueWith(
                        _ => Body(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, pool.GetScheduler(1));
                    antecedent.SetResult(); // the continuation runs inline here
                    continuation.IsCompleted.Should().BeTrue("an ExecuteSynchronously continuation runs inside SetResult");
                    break;
            }

            return Task.FromResult((Inline: taskThread == callerThread, During: during, After: (Running(pool, 0), Running(pool, 1))));
        }, level: 0).WithTimeout("the caller");
        blockerGate.Set();

        result.Inline.Should().BeTrue("level 1 has room and nothing waits above it: the task is inlined");
        result.During.Should().Be((1, 2), "while the task runs, the caller holds its level-0 slot and the task one of level 1 (the blocker the other)");
        result.After.Should().Be((1, 1), "after the task, its slot is given back and the caller still holds its own");
    }

    [Fact]
    public async Task InlinedTask_AfterItReturned_TheCallersLevelAtItsCapAdmitsNoSecondItem()
    {
        // The reviewer's case: a level-0 item (level 0 capped at 1) runs a task inline at level 1, then goes on. A second level-0
        // item must wait for it: the caller kept its slot.
        using var release = new ManualResetEventSlim();
        var pool = CappedPool("nested-cap-holds", 1, 2);
        await using var disposePool = pool.BoundedDisposal();
        var inlined = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var firstEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        pool.GetSynchronizationContext(0).Post(_ =>
        {
            new Task(() => { }).RunSynchronously(pool.GetScheduler(1));
            inlined.SetResult();
            release.WaitOrFail("the test to release the first item");
            firstEnded.SetResult();
        }, null);
        var secondRan = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        try
        {
            await inlined.Task.WithTimeout("the first item to inline its task");
            PriorityThreadPoolTests.WaitUntil(() => pool.IdleCount == 1, "the other thread to park");

            long wakesBefore = pool.WakeCount;
            pool.GetSynchronizationContext(0).Post(_ => secondRan.SetResult(firstEnded.Task.IsCompleted), null);

            // The post wakes the parked thread; with level 0 at its cap it finds nothing it may run and parks again.
            PriorityThreadPoolTests.WaitUntil(() => pool.WakeCount > wakesBefore && pool.IdleCount == 1, "the woken thread to park again");
            secondRan.Task.IsCompleted.Should().BeFalse("level 0 is at its cap while the first item runs");
            pool.GetSnapshot().PendingPerLevel[0].Should().Be(1);
        }
        finally
        {
            release.Set();
        }

        (await secondRan.Task.WithTimeout("the second item")).Should().BeTrue("it ran after the first item ended");
    }

    [Fact]
    public async Task InlinedTask_AtAFullLevel_IsQueued_AndRunsWhenTheLevelHasRoom()
    {
        using var blockerGate = new ManualResetEventSlim();
        var pool = CappedPool("nested-full", 1, 1);
        await using var disposePool = pool.BoundedDisposal();
        int blockerThread = await StartBlocker(pool, 1, blockerGate);

        int taskThread = -1;
        bool ranWhileBlocked = true;
        Task caller = pool.InvokeAsync(() =>
        {
            new Task(() =>
            {
                taskThread = Environment.CurrentManagedThreadId;
                ranWhileBlocked = !blockerGate.IsSet;
            }).RunSynchronously(pool.GetScheduler(1)); // level 1 is at its cap: queued, and this thread waits for it
            return Task.CompletedTask;
        }, level: 0);

        try
        {
            PriorityThreadPoolTests.WaitUntil(() => pool.GetSnapshot().PendingPerLevel[1] == 1 || caller.IsCompleted, "the task to be queued at level 1");
        }
        finally
        {
            blockerGate.Set();
        }

        await caller.WithTimeout("the caller, once the task ran");
        ranWhileBlocked.Should().BeFalse("the task waited for level 1's slot");
        taskThread.Should().Be(blockerThread, "the blocker's thread took the task once its slot was free");
    }

    [Fact]
    public async Task InlinedTask_AtTheCallersLevel_SharesItsSlot_AndAPrioritizeInsideItLeavesTheCallersSlotInPlace()
    {
        // A nested run at the caller's own level needs no second slot (level 0 is capped at 1). An inline Prioritize inside it takes
        // a slot of its own at the new level; it must not move the caller's, which the caller needs once the task returns.
        var pool = CappedPool("nested-same-level", 1, 2);
        await using var disposePool = pool.BoundedDisposal();
        var result = await pool.InvokeAsync(() =>
        {
            (int, int) afterMove = default;
            async Task MoveUpAndRecordAsync()
            {
                await Prioritize(1); // inline: nothing waits above, level 1 has room
                afterMove = (Running(pool, 0), Running(pool, 1));
            }

            int callerThread = Environment.CurrentManagedThreadId;
            int taskThread = -1;
            new Task(() =>
            {
                taskThread = Environment.CurrentManagedThreadId;
                MoveUpAndRecordAsync().IsCompleted.Should().BeTrue("the Prioritize completed inline");
            }).RunSynchronously(pool.GetScheduler(0));
            return Task.FromResult((Inline: taskThread == callerThread, AfterMove: afterMove, After: (Running(pool, 0), Running(pool, 1)), Level: CurrentLevel));
        }, level: 0).WithTimeout("the caller");

        result.Inline.Should().BeTrue("a nested run at the caller's level shares the caller's slot");
        result.AfterMove.Should().Be((1, 1), "the task's code took a slot of level 1; the caller's level-0 slot stayed");
        result.After.Should().Be((1, 0), "the task's end gave its level-1 slot back");
        result.Level.Should().Be(0);
    }

    [Fact]
    public async Task InlinedTask_GivingItsSlotBack_WakesAParkedThreadForTheQueuedItemOfThatLevel()
    {
        // P2 for a nested run's end: level 1 (cap 1) is full while the inlined task runs, so an item posted there is queued and the
        // other thread parks. When the task returns, its slot frees level 1 while the caller goes on: a parked thread must be woken
        // for the queued item at once (the caller waits for it: without the wake-up, nobody would run it).
        using var queuedRan = new ManualResetEventSlim();
        var pool = CappedPool("nested-wakes", 2, 1);
        await using var disposePool = pool.BoundedDisposal();
        await pool.InvokeAsync(() =>
        {
            new Task(() =>
            {
                PriorityThreadPoolTests.WaitUntil(() => pool.IdleCount == 1, "the other thread to park");
                long wakesBefore = pool.WakeCount;
                pool.GetSynchronizationContext(1).Post(_ => queuedRan.Set(), null); // level 1 is at its cap (this task): queued
                PriorityThreadPoolTests.WaitUntil(() => pool.WakeCount > wakesBefore && pool.IdleCount == 1, "the woken thread to park again");
            }).RunSynchronously(pool.GetScheduler(1));

            queuedRan.WaitOrFail("the queued level-1 item to run on the other thread while this item goes on");
            return Task.CompletedTask;
        }, level: 0).WithTimeout("the caller");
    }

    [Fact]
    public async Task Send_OnAPoolThread_BorrowsASlotAtItsLevelWhileItRuns()
    {
        var pool = CappedPool("nested-send", 1, 1);
        await using var disposePool = pool.BoundedDisposal();
        var result = await pool.InvokeAsync(() =>
        {
            int callerThread = Environment.CurrentManagedThreadId;
            (int Thread, int Running0, int Running1, int Level) during = default;
            pool.GetSynchronizationContext(1).Send(_ => during = (Environment.CurrentManagedThreadId, Running(pool, 0), Running(pool, 1), CurrentLevel), null);
            return Task.FromResult((Inline: during.Thread == callerThread, During: (during.Running0, during.Running1, during.Level), After: (Running(pool, 0), Running(pool, 1))));
        }, level: 0).WithTimeout("the caller");

        result.Inline.Should().BeTrue();
        result.During.Should().Be((1, 1, 1), "the callback runs at level 1 on a slot of level 1; the caller keeps its own");
        result.After.Should().Be((1, 0));
    }

    [Fact]
    public async Task Send_OnAPoolThread_ToAFullLevel_StillRunsInline_OnTheCallersSlot()
    {
        // Queueing it and blocking could deadlock (the slot it would wait for may be its caller's): it runs inline, and its level is
        // one over its cap meanwhile (documented).
        using var blockerGate = new ManualResetEventSlim();
        var pool = CappedPool("nested-send-full", 1, 1);
        await using var disposePool = pool.BoundedDisposal();
        await StartBlocker(pool, 1, blockerGate);

        var result = await pool.InvokeAsync(() =>
        {
            int callerThread = Environment.CurrentManagedThreadId;
            (int Thread, int Level) during = default;
            pool.GetSynchronizationContext(1).Send(_ => during = (Environment.CurrentManagedThreadId, CurrentLevel), null);
            return Task.FromResult((Inline: during.Thread == callerThread, during.Level, After: (Running(pool, 0), Running(pool, 1))));
        }, level: 0).WithTimeout("the caller");
        blockerGate.Set();

        result.Inline.Should().BeTrue();
        result.Level.Should().Be(1);
        result.After.Should().Be((1, 1), "nothing was borrowed, so nothing is given back: the blocker's slot and the caller's");
    }
}
