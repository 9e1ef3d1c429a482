using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Pool;

/// <summary>The multi-threaded scheduler: the static <see cref="Priority"/> API on it, its caps, its wake-ups, faults and disposal.</summary>
public class PriorityThreadPoolTests
{
    private static PriorityThreadPoolOptions Options(int threads = 2, int levels = 3) =>
        new() { ThreadCount = threads, Levels = levels, Name = "pool-test" };

    [Fact]
    public async Task Prioritize_FromOutside_HopsOntoThePoolAtThatLevel()
    {
        var pool = new PriorityThreadPool(Options());
        await using var disposePool = pool.BoundedDisposal();
        (PriorityThreadPool? current, int level, PriorityScheduler? scheduler) = await Task.Run(async () =>
        {
            await pool.Prioritize(2);
            return (PriorityThreadPool.Current, CurrentLevel, CurrentScheduler); // on the pool after the hop (the analyzers know it)
        }).WithTimeout("the hop");
        current.Should().BeSameAs(pool);
        level.Should().Be(2);
        scheduler.Should().BeSameAs(pool);
    }

    [Fact]
    public async Task StaticApi_InsideThePool_KeepsTheLevelAcrossAwaits()
    {
        var pool = new PriorityThreadPool(Options());
        await using var disposePool = pool.BoundedDisposal();
        List<int> levels = await pool.InvokeAsync(async () =>
        {
            var seen = new List<int> { CurrentLevel };
            await Prioritize(2); // nothing waits above: completes at once
            seen.Add(CurrentLevel);
            await Yield();
            seen.Add(CurrentLevel);
            await Checkpoint();
            seen.Add(CurrentLevel);
            seen.Add(ShouldYield ? 1 : 0);
#pragma warning disable PA0001 // stands for I/O that completes on the thread pool: the test is about resuming after it
            await Task.Delay(1).ConfigureAwait(true); // resumes through the level's SynchronizationContext
#pragma warning restore PA0001
            seen.Add(CurrentLevel);
            await Prioritize(0);
            seen.Add(CurrentLevel);
            return seen;
        }).WithTimeout("the body");
        levels.Should().Equal(0, 2, 2, 2, 0, 2, 0);
        PriorityContext.Current.Should().BeNull("PriorityContext.Current is a single loop's; the pool's is PriorityThreadPool.Current");
    }

    [Fact]
    public async Task Prioritize_OnAPoolThread_QueuesWhenWorkItMayRunWaitsAbove()
    {
        var pool = new PriorityThreadPool(Options(threads: 1));
        await using var disposePool = pool.BoundedDisposal();
        var order = new ConcurrentQueue<string>();
        await pool.InvokeAsync(async () =>
        {
            pool.GetSynchronizationContext(2).Post(_ => order.Enqueue("urgent"), null);
            ShouldYield.Should().BeTrue("an item waits above level 0 and this is the only thread");
            await Prioritize(1);
            order.Enqueue("after");
        }).WithTimeout("the body");
        order.Should().Equal("urgent", "after");
    }

    [Fact]
    public async Task InvokeAsync_RunsInThePostersExecutionContext_AndLeavesNothingBehind()
    {
        var pool = new PriorityThreadPool(Options(threads: 1));
        await using var disposePool = pool.BoundedDisposal();
        var local = new AsyncLocal<string?>();
        local.Value = "poster";
        string? seen = await pool.InvokeAsync(() =>
        {
            string? value = local.Value;
            local.Value = "leaked?";
            return Task.FromResult(value);
        }).WithTimeout("the first item");
        local.Value = null;
        string? next = await pool.InvokeAsync(() => Task.FromResult(local.Value)).WithTimeout("the second item");
        seen.Should().Be("poster");
        next.Should().BeNull("nothing one item sets is seen by the next (E1)");
    }

    [Fact]
    public async Task Delay_FiresOnThePool_AtTheCallersLevel()
    {
        var pool = new PriorityThreadPool(Options());
        await using var disposePool = pool.BoundedDisposal();
        (int level, bool onPool) = await pool.InvokeAsync(async () =>
        {
            await Delay(TimeSpan.FromMilliseconds(5));
            return (CurrentLevel, PriorityThreadPool.Current == pool);
        }, level: 1).WithTimeout("the delay");
        level.Should().Be(1);
        onPool.Should().BeTrue();
    }

    [Fact]
    public async Task Delay_Cancelled_ThrowsTaskCanceledOnThePool()
    {
        var pool = new PriorityThreadPool(Options());
        await using var disposePool = pool.BoundedDisposal();
        using var cts = new CancellationTokenSource();
        Task pending = pool.InvokeAsync(async () => await Delay(Timeout.InfiniteTimeSpan, cts.Token), level: 1);
        cts.Cancel();
        await FluentActions.Awaiting(() => pending.WithTimeout("the cancelled delay")).Should().ThrowAsync<TaskCanceledException>();
    }

    [Fact]
    public async Task TimeProvider_TimerFiresOnThePoolAtItsLevel()
    {
        var pool = new PriorityThreadPool(Options());
        await using var disposePool = pool.BoundedDisposal();
        var fired = new TaskCompletionSource<(int Level, bool OnPool)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using ITimer timer = pool.GetTimeProvider(2).CreateTimer(
            _ => fired.TrySetResult((CurrentLevel, PriorityThreadPool.Current == pool)), null, TimeSpan.FromMilliseconds(2), Timeout.InfiniteTimeSpan);
        (int level, bool onPool) = await fired.Task.WithTimeout("the timer");
        level.Should().Be(2);
        onPool.Should().BeTrue();
    }

    [Fact]
    public async Task PendingDelay_WhenThePoolEnds_IsDroppedAndItsAwaiterReleased()
    {
        var pool = new PriorityThreadPool(Options());
        var dropped = new ConcurrentQueue<WorkDroppedEventArgs>();
        pool.WorkDropped += (_, e) => dropped.Enqueue(e);
        var armed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<Task> waiter = pool.InvokeAsync(() =>
        {
            Task delay = Delay(Timeout.InfiniteTimeSpan).AsTask();
            armed.SetResult();
            return Task.FromResult(delay);
        });
        Task delay = await waiter.WithTimeout("arming");
        await pool.DisposeOrFailAsync();
        await FluentActions.Awaiting(() => delay.WithTimeout("the dropped delay")).Should().ThrowAsync<ObjectDisposedException>();
        dropped.Should().ContainSingle(e => e.Reason == DropReason.TimerArmedAtFinish);
    }

    [Fact]
    public async Task Cap_KeepsALevelBelowItsThreads_AndAnotherLevelRunsBesideIt()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            ThreadCount = 2,
            Levels = 2,
            MaxConcurrencyPerLevel = [1, 2],
        });
        await using var disposePool = pool.BoundedDisposal();
        pool.GetMaxConcurrency(0).Should().Be(1);
        pool.GetScheduler(0).MaximumConcurrencyLevel.Should().Be(1);
        using var release = new ManualResetEventSlim();
        int running = 0;
        int maxRunning = 0;
        var firstIn = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var bulk = Enumerable.Range(0, 2).Select(_ => pool.GetTaskFactory(0).StartNew(() =>
        {
            int now = Interlocked.Increment(ref running);
            InterlockedMax(ref maxRunning, now);
            firstIn.TrySetResult();
            release.WaitOrFail("the test to release the bulk items");
            Interlocked.Decrement(ref running);
        })).ToArray();
        await firstIn.Task.WithTimeout("a bulk item to start");

        // The second bulk item waits for the cap; the free thread is not idle for urgent work.
        bool urgentRan = await pool.GetTaskFactory(1).StartNew(() => true).WithTimeout("the urgent item beside the capped level");
        urgentRan.Should().BeTrue();
        Volatile.Read(ref running).Should().Be(1, "level 0 may use one thread");
        release.Set();
        await Task.WhenAll(bulk).WithTimeout("the bulk items");
        maxRunning.Should().Be(1);
    }

    [Fact]
    public async Task Cap_FreedByAnInlinePrioritize_WakesAParkedThreadForTheQueuedItemOfThatLevel()
    {
        // K-N with P2: an item of a capped level moves up with an inline Prioritize and keeps running. The slot it frees lets the
        // queued item of its old level run now, on the parked thread, not only once the moved item ends (work conservation).
        using var movedGate = new ManualResetEventSlim();
        using var keepRunning = new ManualResetEventSlim();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            ThreadCount = 2,
            Levels = 2,
            MaxConcurrencyPerLevel = [1, 2],
            Name = "cap-freed-inline",
        });
        await using var disposePool = pool.BoundedDisposal();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var moved = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task first = pool.InvokeAsync(async () =>
        {
            started.SetResult();
            movedGate.WaitOrFail("the test to let the first item move up");
            int threadBefore = Environment.CurrentManagedThreadId;
            await Prioritize(1); // inline: nothing waits above, level 1 has room
            Environment.CurrentManagedThreadId.Should().Be(threadBefore, "the move is inline, on the same thread");
            moved.SetResult();
            keepRunning.WaitOrFail("the second item to run beside the moved one");
        }, level: 0);
        await started.Task.WithTimeout("the first item to start");

        var secondRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        pool.GetSynchronizationContext(0).Post(_ => secondRan.SetResult(), null); // level 0 is at its cap: queued
        WaitUntil(() => pool.IdleCount == 1, "the other thread to park (nothing it may run)");

        movedGate.Set();
        await moved.Task.WithTimeout("the first item to move to level 1");
        await secondRan.Task.WithTimeout("the queued level-0 item to run while the moved item still runs");
        keepRunning.Set();
        await first.WithTimeout("the first item");
    }

    [Fact]
    public async Task Post_ToAnIdlePool_WakesOneThreadNotAll()
    {
        var pool = new PriorityThreadPool(Options(threads: 4));
        await using var disposePool = pool.BoundedDisposal();
        WaitUntil(() => pool.IdleCount == 4, "every thread to park");
        long before = pool.WakeCount;
        using var ran = new ManualResetEventSlim();
        pool.GetSynchronizationContext(0).Post(_ => ran.Set(), null);
        ran.WaitOrFail("the posted item");
        (pool.WakeCount - before).Should().Be(1, "one item, one wake-up");
        WaitUntil(() => pool.IdleCount == 4, "the woken thread to park again");
    }

    [Fact]
    public async Task QueuedBurst_IsSpreadOverEveryThread()
    {
        // Declared before the pool, so disposed after it: the pool's disposal waits for the items that may still be inside Wait.
        using var all = new CountdownEvent(3);
        using var release = new ManualResetEventSlim();
        var pool = new PriorityThreadPool(Options(threads: 3));
        await using var disposePool = pool.BoundedDisposal();
        for (int i = 0; i < 3; i++)
        {
            pool.GetSynchronizationContext(0).Post(_ =>
            {
                all.Signal();
                release.WaitOrFail("the release");
            }, null);
        }

        all.Wait(TestTimeout.Unexpected).Should().BeTrue("three blocking items run at once on three threads (work-conserving)");
        release.Set();
    }

    [Fact]
    public async Task UnhandledException_NotHandled_FaultsThePool_AndDropsWhatIsQueued()
    {
        var pool = new PriorityThreadPool(Options(threads: 1));
        var boom = new InvalidOperationException("boom");
        var dropped = new ConcurrentQueue<WorkDroppedEventArgs>();
        pool.WorkDropped += (_, e) => dropped.Enqueue(e);
        pool.GetSynchronizationContext(1).Post(_ =>
        {
            pool.GetSynchronizationContext(0).Post(_ => { }, null);
            throw boom;
        }, null);
        (await FluentActions.Awaiting(() => pool.Completion.WithTimeout("the fault")).Should().ThrowAsync<InvalidOperationException>())
            .Which.Should().BeSameAs(boom);
        pool.State.Should().Be(PrioritySchedulerState.Faulted);
        dropped.Should().ContainSingle(e => e.Reason == DropReason.AbandonedAfterFault);
        await FluentActions.Awaiting(() => pool.DisposeOrFailAsync()).Should().ThrowAsync<InvalidOperationException>();
    }

    [Fact]
    public async Task UnhandledException_Handled_KeepsThePoolRunning()
    {
        var pool = new PriorityThreadPool(Options());
        await using var disposePool = pool.BoundedDisposal();
        var seen = new TaskCompletionSource<PriorityUnhandledExceptionEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        pool.UnhandledException += (_, e) =>
        {
            e.Handled = true;
            seen.TrySetResult(e);
        };
        pool.GetSynchronizationContext(2).Post(_ => throw new InvalidOperationException("handled"), null);
        PriorityUnhandledExceptionEventArgs args = await seen.Task.WithTimeout("the handler");
        args.Level.Should().Be(2);
        (await pool.InvokeAsync(() => Task.FromResult(1)).WithTimeout("work after the exception")).Should().Be(1);
    }

    [Fact]
    public async Task DisposeAsync_RunsQueuedWorkFirst_ThenLatePostsAreDroppedAndReported()
    {
        var pool = new PriorityThreadPool(Options());
        int ran = 0;
        for (int i = 0; i < 100; i++)
        {
            pool.GetSynchronizationContext(i % 3).Post(_ => Interlocked.Increment(ref ran), null);
        }

        await pool.DisposeAsync().AsTask().WithTimeout("the drain");
        ran.Should().Be(100, "disposal drains before it stops");
        pool.State.Should().Be(PrioritySchedulerState.Completed);

        var dropped = new ConcurrentQueue<WorkDroppedEventArgs>();
        pool.WorkDropped += (_, e) => dropped.Enqueue(e);
        pool.GetSynchronizationContext(1).Post(_ => Interlocked.Increment(ref ran), null);
        Task late = pool.InvokeAsync(() => Task.CompletedTask);
        await FluentActions.Awaiting(() => late.WithTimeout("the late work's task")).Should().ThrowAsync<ObjectDisposedException>();
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).Send(_ => { }, null)).Should().Throw<ObjectDisposedException>();
        Action start = () => pool.GetTaskFactory(0).StartNew(() => { });
        start.Should().Throw<TaskSchedulerException>().WithInnerException<ObjectDisposedException>();
        dropped.Should().HaveCount(2);
        ran.Should().Be(100);
        pool.GetSnapshot().DroppedCount.Should().Be(2);
    }

    [Fact]
    public async Task Complete_WaitsForOutstandingWork_AndRootChildren()
    {
        var pool = new PriorityThreadPool(Options());
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool childEnded = false;
        await pool.InvokeAsync(() =>
        {
            Start(async _ =>
            {
                await release.Task;
                childEnded = true;
            });
            return Task.CompletedTask;
        }).WithTimeout("starting the child");
        pool.Complete();
        pool.Completion.IsCompleted.Should().BeFalse("a root child is running");
        release.SetResult();
        await pool.Completion.WithTimeout("the pool to end after its child");
        childEnded.Should().BeTrue();
    }

    [Fact]
    public async Task ScopeCancel_CancelsTheirToken_ThePoolStillWaitsForThem_AndAfterTheEndItIsANoOp()
    {
        var pool = new PriorityThreadPool(Options());
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool childEnded = false;
        await pool.InvokeAsync(() =>
        {
            Start(async token =>
            {
                try
                {
                    await Delay(Timeout.InfiniteTimeSpan, token);
                }
                catch (OperationCanceledException)
                {
                    cancelled.SetResult();
                    await release.Task;
                    Volatile.Write(ref childEnded, true);
                }
            });
            return Task.CompletedTask;
        }).WithTimeout("starting the child");

        pool.Scope.Cancel();
        await cancelled.Task.WithTimeout("the child to see its token cancelled");
        pool.Complete();
        pool.Completion.IsCompleted.Should().BeFalse("the cancelled child has not ended");
        release.SetResult();
        await pool.Completion.WithTimeout("the pool to end after its child");
        Volatile.Read(ref childEnded).Should().BeTrue();

        FluentActions.Invoking(pool.Scope.Cancel).Should().NotThrow("the pool ended: nothing is left to cancel");
    }

    [Fact]
    public async Task RootChild_Failure_SurfacesInCompletion_AndCancelsTheOthers()
    {
        var pool = new PriorityThreadPool(Options());
        var boom = new InvalidOperationException("child failed");
        bool siblingCancelled = false;
        await pool.InvokeAsync(() =>
        {
            Start(async token =>
            {
                try
                {
                    await Delay(Timeout.InfiniteTimeSpan, token);
                }
                catch (OperationCanceledException)
                {
                    siblingCancelled = true;
                }
            });
            Start(_ => Task.FromException(boom), level: 2);
            return Task.CompletedTask;
        }).WithTimeout("starting the children");
        pool.Complete();
        (await FluentActions.Awaiting(() => pool.Completion.WithTimeout("the pool")).Should().ThrowAsync<InvalidOperationException>())
            .Which.Should().BeSameAs(boom);
        siblingCancelled.Should().BeTrue();
    }

    [Fact]
    public async Task Snapshot_SumsRunCountsOverThreads()
    {
        var pool = new PriorityThreadPool(Options(threads: 3));
        await using var disposePool = pool.BoundedDisposal();
        await Task.WhenAll(Enumerable.Range(0, 30).Select(i => pool.InvokeAsync(() => Task.CompletedTask, i % 3).Task)).WithTimeout("the items");
        PrioritySchedulerSnapshot snapshot = pool.GetSnapshot();
        snapshot.RunPerLevel.Should().Equal(10, 10, 10);
        snapshot.State.Should().Be(PrioritySchedulerState.Running);
    }

    [Fact]
    public async Task WeightedShares_CanBeReadAndChanged_AndOtherPoliciesRefuse()
    {
        var shares = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 2, Policy = PriorityPolicy.WeightedShares(1, 3) });
        await using var disposeShares = shares.BoundedDisposal();
        shares.GetShares(1).Should().Be(3);
        shares.SetShares(1, 5);
        shares.GetShares(1).Should().Be(5);
        var strict = new PriorityThreadPool(Options());
        await using var disposeStrict = strict.BoundedDisposal();
        FluentActions.Invoking(() => strict.GetShares(0)).Should().Throw<InvalidOperationException>();
    }

    [Fact]
    public async Task Aging_And_Shares_RunEveryItemExactlyOnce()
    {
        foreach (PriorityPolicy policy in new PriorityPolicy[] { PriorityPolicy.Aging(TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(50)), PriorityPolicy.WeightedShares(1, 2, 4) })
        {
            var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 3, Policy = policy, MaxConcurrencyPerLevel = [1, 2, 2] });
            await using var disposePool = pool.BoundedDisposal();
            int ran = 0;
            await Task.WhenAll(Enumerable.Range(0, 300).Select(i => pool.InvokeAsync(() =>
            {
                Interlocked.Increment(ref ran);
                return Task.CompletedTask;
            }, i % 3).Task)).WithTimeout($"the items under {policy}");
            ran.Should().Be(300);
        }
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int current = Volatile.Read(ref target);
        while (value > current)
        {
            int seen = Interlocked.CompareExchange(ref target, value, current);
            if (seen == current)
            {
                return;
            }

            current = seen;
        }
    }

    internal static void WaitUntil(Func<bool> condition, string what)
    {
        DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out waiting for {what}.");
            }

            Thread.Sleep(1);
        }
    }
}
