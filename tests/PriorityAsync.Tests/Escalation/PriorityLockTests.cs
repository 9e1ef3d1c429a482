using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Escalation;

/// <summary><see cref="PriorityLock"/> and <see cref="PrioritySemaphore"/> ([X-LOCK]): exclusion, the order of grants, inheritance, the
/// region's context, cancellation and timeouts, and every bad use with its message.</summary>
public class PriorityLockTests
{
    [Fact]
    public async Task Lock_ManyHoldersOnAPool_NeverTwoInsideAtOnce()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 3, Levels = 3 });
        await using var disposePool = pool.BoundedDisposal();
        var lk = new PriorityLock();
        int inside = 0;
        int most = 0;
        int count = 0;
        await Task.WhenAll(Enumerable.Range(0, 300).Select(i => pool.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                    int now = Interlocked.Increment(ref inside);
                    InterlockedMax(ref most, now);
                    int read = count;
                    await Yield();
                    count = read + 1; // a lost update if two were inside
                    Interlocked.Decrement(ref inside);
                }
            },
            i % 3).Task)).WithTimeout("the holders");

        count.Should().Be(300);
        most.Should().Be(1);
        lk.IsHeld.Should().BeFalse();
    }

    [Fact]
    public async Task Lock_Waiters_AreGrantedHighestLevelFirst_FifoWithinALevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock();
        var granted = new ConcurrentQueue<string>();

        // Held by the test's thread (off the scheduler, so nothing to raise and the waiters queue up in their own order).
        PriorityLock.Releaser holding = await lk.LockAsync();
        var waiters = new List<Task>();
        foreach ((string name, int level) in new[] { ("0a", 0), ("2a", 2), ("1a", 1), ("2b", 2), ("0b", 0) })
        {
            waiters.Add(loop.Context.InvokeAsync(
                async () =>
                {
                    using (await lk.LockAsync())
                    {
                        granted.Enqueue(name);
                    }
                },
                level).Task);
            await WaitUntilAsync(() => lk.WaitingCount == waiters.Count, $"waiter {name}");
        }

        holding.Dispose();
        await Task.WhenAll(waiters).WithTimeout("the waiters");
        granted.Should().Equal("2a", "2b", "1a", "0a", "0b");
    }

    [Fact]
    public async Task Lock_HolderBehindMediumWork_RunsAtTheWaitersLevelUntilItReleases()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 4 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock();
        var log = new ConcurrentQueue<string>();
        PriorityTask holder = default;
        await loop.Context.RunOn(3, async () =>
        {
            var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            holder = loop.Context.InvokeAsync(
                async () =>
                {
                    using (await lk.LockAsync())
                    {
                        holding.SetResult();
                        await io.Task; // the I/O call: when it completes, the rest is queued in the region, at level 0
                        log.Enqueue($"holder releases at {CurrentLevel}");
                    }

                    await Yield();
                    log.Enqueue("holder after the region"); // back at its own level: after the medium items
                },
                level: 0);
            await holding.Task;
            foreach (string name in new[] { "m1", "m2" })
            {
                loop.Context.GetSynchronizationContext(2).Post(_ => log.Enqueue(name), null);
            }

            io.SetResult();
            using (await lk.LockAsync())
            {
                log.Enqueue("waiter");
            }
        }).WithTimeout("the waiter");

        await holder.WithTimeout("the holder");
        log.Should().Equal("holder releases at 0", "waiter", "m1", "m2", "holder after the region");
    }

    [Fact]
    public async Task Lock_Region_RunsInItsOwnFlow_AndTheReleaseGivesTheCallersContextBack()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock();
        await loop.Context.RunOn(1, async () =>
        {
            SynchronizationContext before = SynchronizationContext.Current!;
            using (await lk.LockAsync())
            {
                SynchronizationContext.Current.Should().NotBeSameAs(before, "the region has a context of its own");
                CurrentLevel.Should().Be(1);
                await Delay(TimeSpan.FromMilliseconds(1));
                CurrentLevel.Should().Be(1);
                SynchronizationContext.Current.Should().NotBeSameAs(before, "its awaits come back in the region");
            }

            SynchronizationContext.Current.Should().BeSameAs(before);
        }).WithTimeout("the region");
    }

    [Fact]
    public async Task Lock_Cancelled_ThrowsAndIsNotGranted_TheNextWaiterIs()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock { Name = "client" };
        PriorityLock.Releaser holding = await lk.LockAsync(); // held off the scheduler
        using var cancel = new CancellationTokenSource();
        string? message = null;
        PriorityTask cancelled = loop.Context.InvokeAsync(
            async () =>
            {
                try
                {
                    using (await lk.LockAsync(cancel.Token))
                    {
                    }
                }
                catch (OperationCanceledException ex)
                {
                    message = ex.Message;
                    throw;
                }
            },
            level: 2);
        await WaitUntilAsync(() => lk.WaitingCount == 1, "the waiter that will be cancelled");
        PriorityTask<bool> next = loop.Context.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                    return lk.IsHeld;
                }
            },
            level: 0);
        await WaitUntilAsync(() => lk.WaitingCount == 2, "the next waiter");

        cancel.Cancel();
        Func<Task> awaitCancelled = () => cancelled.WithTimeout("the cancelled wait");
        await awaitCancelled.Should().ThrowAsync<OperationCanceledException>();
        message.Should().Be("The wait for the PriorityLock 'client' was cancelled.");
        lk.WaitingCount.Should().Be(1);
        holding.Dispose();
        (await next.WithTimeout("the next waiter")).Should().BeTrue("the next waiter holds it in its region");
        lk.IsHeld.Should().BeFalse();

        Func<Task> alreadyCancelled = async () => await lk.LockAsync(new CancellationToken(canceled: true));
        await alreadyCancelled.Should().ThrowAsync<OperationCanceledException>();
        lk.IsHeld.Should().BeFalse();
    }

    [Fact]
    public void Semaphore_Timeout_RunsOnTheSchedulersClock()
    {
        var clock = new VirtualTimeProvider();
        var semaphore = new PrioritySemaphore(1, 1) { Name = "db" };
        var results = new List<string>();
        PriorityContext.Run(
            async () =>
            {
                await semaphore.WaitAsync();
                results.Add($"zero timeout: {await semaphore.WaitAsync(TimeSpan.Zero)}");
                DateTimeOffset start = clock.GetUtcNow();
                results.Add($"timed out: {!await semaphore.WaitAsync(TimeSpan.FromSeconds(5))} after {(clock.GetUtcNow() - start).TotalSeconds} s");
                semaphore.WaitingCount.Should().Be(0);
                Start(async stop =>
                {
                    await Delay(TimeSpan.FromSeconds(2), stop);
                    semaphore.Release();
                });
                results.Add($"granted in time: {await semaphore.WaitAsync(TimeSpan.FromSeconds(5))} after {(clock.GetUtcNow() - start).TotalSeconds} s");
                semaphore.Release();
            },
            new PriorityContextOptions { Levels = 2, TimeProvider = clock });

        results.Should().Equal("zero timeout: False", "timed out: True after 5 s", "granted in time: True after 7 s");
    }

    [Fact]
    public async Task Lock_OffEveryScheduler_StillExcludes_AndRanksAtLevel0()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock();
        var granted = new ConcurrentQueue<string>();
        PriorityLock.Releaser holding = await lk.LockAsync(); // the test's thread: no scheduler, no region
        Task offScheduler = Task.Run(async () =>
        {
            using (await lk.LockAsync())
            {
                granted.Enqueue("off the scheduler");
            }
        });
        await WaitUntilAsync(() => lk.WaitingCount == 1, "the off-scheduler waiter");
        Task atLevel1 = loop.Context.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                    granted.Enqueue("level 1");
                }
            },
            level: 1);
        await WaitUntilAsync(() => lk.WaitingCount == 2, "the level-1 waiter");
        holding.Dispose();
        await Task.WhenAll(offScheduler, atLevel1).WithTimeout("the waiters");
        granted.Should().Equal("level 1", "off the scheduler");
    }

    [Fact]
    public async Task Lock_HolderOnAnotherScheduler_IsNotRaised_ButExclusionAndTheGrantHold()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 3 });
        await using var disposePool = pool.BoundedDisposal();
        var lk = new PriorityLock();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task holder = pool.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                    holding.SetResult();
                    await release.Task;
                }
            },
            level: 0);
        await holding.Task.WithTimeout("the holder");
        Task waiter = loop.Context.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                }
            },
            level: 2);
        await WaitUntilAsync(() => lk.WaitingCount == 1, "the waiter");
        release.SetResult();
        await Task.WhenAll(holder, waiter).WithTimeout("the holder and the waiter");
    }

    // ---- Bad use --------------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Lock_ReleasedTwice_ThrowsNamingTheLock_AndStaysConsistent()
    {
        var lk = new PriorityLock { Name = "client" };
        PriorityLock.Releaser holding = await lk.LockAsync();
        holding.Dispose();
        FluentActions.Invoking(holding.Dispose).Should().Throw<InvalidOperationException>()
            .WithMessage("The PriorityLock 'client' was released by a releaser whose holding has already ended: it was released twice*");
        lk.IsHeld.Should().BeFalse();
        using (await lk.LockAsync())
        {
            lk.IsHeld.Should().BeTrue();
        }
    }

    [Fact]
    public void Lock_DefaultReleaser_ThrowsWithoutReleasingAnything()
    {
        FluentActions.Invoking(() => default(PriorityLock.Releaser).Dispose()).Should().Throw<InvalidOperationException>()
            .WithMessage("*not returned by PriorityLock.LockAsync*");
    }

    [Fact]
    public async Task Lock_WaitedForInsideItsOwnRegion_ThrowsInsteadOfWaitingForEver()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock { Name = "client" };
        await loop.Context.RunOn(1, async () =>
        {
            using (await lk.LockAsync())
            {
                await Task.Yield();
                Func<Task> reenter = async () => await NestedAsync(lk); // a callee that takes the same lock: the classic async deadlock
                (await reenter.Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should()
                    .Contain("The PriorityLock 'client' is already held by the code that is waiting for it").And.Contain("not re-entrant");
                lk.WaitingCount.Should().Be(0, "the refused wait queued nothing");
            }

            // Concurrent branches of one flow wait for each other as usual: only the region itself is refused.
            await Task.WhenAll(BranchAsync(lk), BranchAsync(lk));
        }).WithTimeout("the region");

        static async Task NestedAsync(PriorityLock lk)
        {
            using (await lk.LockAsync())
            {
            }
        }

        static async Task BranchAsync(PriorityLock lk)
        {
            using (await lk.LockAsync())
            {
                await Yield();
            }
        }
    }

    [Fact]
    public void Semaphore_BadArguments_AndOverRelease_AreNamed()
    {
        FluentActions.Invoking(() => new PrioritySemaphore(-1)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("initialCount");
        FluentActions.Invoking(() => new PrioritySemaphore(2, 1)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("initialCount");
        FluentActions.Invoking(() => new PrioritySemaphore(0, 0)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("maxCount");
        var semaphore = new PrioritySemaphore(1, 1) { Name = "db" };
        FluentActions.Invoking(() => semaphore.Release(0)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("releaseCount");
        FluentActions.Invoking(() => semaphore.Release()).Should().Throw<SemaphoreFullException>()
            .WithMessage("The PrioritySemaphore 'db' has 1 free permits of at most 1; releasing 1 more would exceed it*");
        FluentActions.Invoking(() => semaphore.WaitAsync(TimeSpan.FromMilliseconds(-2))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("timeout");
        FluentActions.Invoking(() => semaphore.WaitAsync(-2)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("millisecondsTimeout");
        semaphore.CurrentCount.Should().Be(1);
    }

    [Fact]
    public async Task Semaphore_AsASignal_ReleasedByOtherCode_Works()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        var signal = new PrioritySemaphore(0);
        Task waiter = loop.Context.InvokeAsync(async () => await signal.WaitAsync(), level: 1);
        await WaitUntilAsync(() => signal.WaitingCount == 1, "the waiter");
        signal.Release().Should().Be(0);
        await waiter.WithTimeout("the signalled waiter");
        signal.CurrentCount.Should().Be(0);
    }

    [Fact]
    public async Task Lock_SchedulerFaultsWithAGrantedWaiterQueued_ReleasesTheHoldingAndTheAwaitThrows()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        var lk = new PriorityLock { Name = "client" };
        PriorityLock.Releaser holding = await lk.LockAsync(); // held off the scheduler
        var outcome = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.GetSynchronizationContext(1).Post(
            async _ =>
            {
                try
                {
                    using (await lk.LockAsync())
                    {
                        outcome.TrySetResult(null);
                    }
                }
                catch (Exception ex)
                {
                    outcome.TrySetResult(ex);
                }
            },
            null);
        await WaitUntilAsync(() => lk.WaitingCount == 1, "the waiter");
        using (loop.Context.PauseLoop())
        {
            loop.Context.GetSynchronizationContext(1).Post(_ => throw new InvalidOperationException("fault"), null); // runs first
            holding.Dispose(); // granted: its continuation is queued in its region, behind the faulting item
        }

        Func<Task> end = () => loop.Completion.WithTimeout("the loop to end");
        await end.Should().ThrowAsync<InvalidOperationException>().WithMessage("fault");
        Exception? thrown = await outcome.Task.WithTimeout("the waiter's outcome");
        thrown.Should().BeOfType<ObjectDisposedException>("the granted continuation was dropped, and resumed where its await throws");
        lk.IsHeld.Should().BeFalse("a dropped grant gives the lock back");
        loop.Complete();
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

    private static async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out waiting for: {what}.");
            }

            await Task.Delay(1);
        }
    }
}
