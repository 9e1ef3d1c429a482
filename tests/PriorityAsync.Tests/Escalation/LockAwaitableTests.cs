using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Escalation;

/// <summary>What <see cref="PriorityLock.LockAsync"/> returns, <see cref="PriorityLock.LockAwaitable"/> ([X-LOCK-FAST]): taken at once,
/// waited for, cancelled before it began and a default value, awaited, as a task and through its awaiter by hand.</summary>
public class LockAwaitableTests
{
    [Fact]
    public async Task Uncontended_IsCompleted_AndEveryFormGivesAReleaserOfTheHolding()
    {
        var lk = new PriorityLock { Name = "client" };

        PriorityLock.LockAwaitable taken = lk.LockAsync();
        taken.IsCompleted.Should().BeTrue();
        lk.IsHeld.Should().BeTrue("an uncontended take holds before the await");
        using (await taken)
        {
            lk.IsHeld.Should().BeTrue();
        }

        lk.IsHeld.Should().BeFalse();

        Task<PriorityLock.Releaser> asTask = lk.LockAsync().AsTask();
        asTask.IsCompletedSuccessfully.Should().BeTrue();
        (await asTask).Dispose();
        lk.IsHeld.Should().BeFalse();

        ValueTask<PriorityLock.Releaser> asValueTask = lk.LockAsync().AsValueTask();
        asValueTask.IsCompletedSuccessfully.Should().BeTrue();
        PriorityLock.Releaser releaser = await asValueTask;
        releaser.Dispose();
        lk.IsHeld.Should().BeFalse();
        FluentActions.Invoking(releaser.Dispose).Should().Throw<InvalidOperationException>().WithMessage("*released twice*");
    }

    [Fact]
    public async Task Contended_IsCompletedOnlyOnceGranted_AsAwaitableAndAsTask()
    {
        var lk = new PriorityLock { Name = "client" };
        PriorityLock.Releaser holding = await lk.LockAsync(); // the test's thread: off every scheduler

        PriorityLock.LockAwaitable waiting = lk.LockAsync();
        Task<PriorityLock.Releaser> waitingAsTask = lk.LockAsync().AsTask();
        waiting.IsCompleted.Should().BeFalse();
        waitingAsTask.IsCompleted.Should().BeFalse();
        lk.WaitingCount.Should().Be(2);

        Task first = Task.Run(async () =>
        {
            using (await waiting)
            {
                lk.IsHeld.Should().BeTrue();
            }
        });
        holding.Dispose(); // granted in arrival order (both rank at level 0): the awaitable, then the task
        await first.WithTimeout("the first waiter");
        waiting.IsCompleted.Should().BeTrue();
        (await waitingAsTask.WithTimeout("the second waiter")).Dispose();
        lk.IsHeld.Should().BeFalse();
        lk.WaitingCount.Should().Be(0);
    }

    [Fact]
    public async Task CancelledBeforeItBegan_EveryFormThrowsOperationCanceled_AndTakesNothing()
    {
        var lk = new PriorityLock();
        var token = new CancellationToken(canceled: true);

        PriorityLock.LockAwaitable cancelled = lk.LockAsync(token);
        cancelled.IsCompleted.Should().BeTrue();
        Func<Task> awaitIt = async () => await lk.LockAsync(token);
        await awaitIt.Should().ThrowAsync<OperationCanceledException>();
        lk.LockAsync(token).AsTask().IsCanceled.Should().BeTrue();
        Func<Task> awaitAsValueTask = async () => await lk.LockAsync(token).AsValueTask();
        await awaitAsValueTask.Should().ThrowAsync<OperationCanceledException>();
        lk.IsHeld.Should().BeFalse();
        lk.WaitingCount.Should().Be(0);
    }

    [Fact]
    public async Task DefaultValue_ThrowsNamingLockAsync_InEveryForm()
    {
        Func<Task> awaitDefault = async () => await default(PriorityLock.LockAwaitable);
        await awaitDefault.Should().ThrowAsync<InvalidOperationException>().WithMessage("*not returned by PriorityLock.LockAsync*");
        FluentActions.Invoking(() => { _ = default(PriorityLock.LockAwaitable).AsTask(); }).Should().Throw<InvalidOperationException>()
            .WithMessage("*not returned by PriorityLock.LockAsync*");
        default(PriorityLock.LockAwaitable).IsCompleted.Should().BeTrue("nothing to wait for: GetResult says why");
    }

    [Fact]
    public async Task AwaiterByHand_OnCompletedFlowsTheExecutionContext_UnsafeOnCompletedDoesNot()
    {
        var lk = new PriorityLock();
        var value = new AsyncLocal<string?>();
        PriorityLock.Releaser holding = await lk.LockAsync();

        PriorityLock.LockAwaiter safe = lk.LockAsync().GetAwaiter();
        PriorityLock.LockAwaiter unsafeOne = lk.LockAsync().GetAwaiter();
        var seenBySafe = new TaskCompletionSource<(string? Value, PriorityLock.Releaser Releaser)>(TaskCreationOptions.RunContinuationsAsynchronously);
        var seenByUnsafe = new TaskCompletionSource<(string? Value, PriorityLock.Releaser Releaser)>(TaskCreationOptions.RunContinuationsAsynchronously);
        value.Value = "registered";
        safe.IsCompleted.Should().BeFalse();
        safe.OnCompleted(() => seenBySafe.SetResult((value.Value, safe.GetResult())));
        using (ExecutionContext.SuppressFlow())
        {
            unsafeOne.UnsafeOnCompleted(() => seenByUnsafe.SetResult((value.Value, unsafeOne.GetResult())));
        }

        value.Value = "changed after";
        holding.Dispose();
        (string? safeValue, PriorityLock.Releaser safeReleaser) = await seenBySafe.Task.WithTimeout("the first continuation");
        safeValue.Should().Be("registered");
        safeReleaser.Dispose();
        (string? unsafeValue, PriorityLock.Releaser unsafeReleaser) = await seenByUnsafe.Task.WithTimeout("the second continuation");
        unsafeValue.Should().NotBe("registered", "nothing was captured: it runs in the context of the code that resumes it");
        unsafeReleaser.Dispose();
        lk.IsHeld.Should().BeFalse();
    }

    [Fact]
    public async Task OnALoop_AGrantedAwaitResumesInTheRegion_AndTheReleaseGivesTheCallersContextBack()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock { Name = "client" };
        PriorityLock.Releaser first = await lk.LockAsync(); // off the scheduler: the loop's take waits
        var seen = new TaskCompletionSource<(bool InRegion, bool BackAfter)>(TaskCreationOptions.RunContinuationsAsynchronously);
        Task holder = loop.Context.InvokeAsync(
            async () =>
            {
                SynchronizationContext before = SynchronizationContext.Current!;
                PriorityLock.LockAwaitable taking = lk.LockAsync();
                taking.IsCompleted.Should().BeFalse();
                bool inRegion;
                using (await taking)
                {
                    inRegion = SynchronizationContext.Current is PrioritySynchronizationContext now && !ReferenceEquals(now, before);
                }

                seen.SetResult((inRegion, ReferenceEquals(SynchronizationContext.Current, before)));
            },
            1).Task;
        await WaitUntilAsync(() => lk.WaitingCount == 1, "the loop's waiter");
        first.Dispose();
        await holder.WithTimeout("the holder");
        (await seen.Task).Should().Be((true, true), "a granted wait resumes in the lock's region, and the release leaves it ([X-LOCK])");
    }

    [Theory]
    [InlineData("lock")]
    [InlineData("semaphore")]
    public async Task OnALoop_AGrantBeforeTheAwait_GoesOnInTheRegion_AndTheReleaseGivesTheCallersContextBack(string kind)
    {
        // The grant completes the wait before the awaiting code registers a continuation, so the await goes on at once on the loop,
        // in the context it waited from: it must enter the region there, or a later waiter would raise a region its code is not in.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock { Name = "client" };
        var semaphore = new PrioritySemaphore(1, 1) { Name = "db" };
        PriorityLock.Releaser firstLock = await lk.LockAsync(); // off the scheduler: the loop's take waits
        await semaphore.WaitAsync(); // the same for the semaphore
        var waiting = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<(bool InRegion, bool BackAfter)> holder = loop.Context.InvokeAsync(
            async () =>
            {
                SynchronizationContext before = SynchronizationContext.Current!;
                bool inRegion;
                if (kind == "lock")
                {
                    PriorityLock.LockAwaitable taking = lk.LockAsync();
                    waiting.SetResult();
#pragma warning disable PA0002 // blocking the loop on purpose: the grant completes the wait with no continuation registered
                    release.Task.Wait();
#pragma warning restore PA0002
                    SpinWait.SpinUntil(() => taking.IsCompleted);
                    using (await taking)
                    {
                        inRegion = IsRegionOtherThan(before);
                    }
                }
                else
                {
                    ValueTask taking = semaphore.WaitAsync();
                    waiting.SetResult();
#pragma warning disable PA0002 // as above
                    release.Task.Wait();
#pragma warning restore PA0002
                    SpinWait.SpinUntil(() => taking.IsCompleted);
                    await taking;
                    inRegion = IsRegionOtherThan(before);
                    semaphore.Release();
                }

                return (inRegion, ReferenceEquals(SynchronizationContext.Current, before));
            },
            1).Task;
        await waiting.Task.WithTimeout("the loop's wait");
        if (kind == "lock")
        {
            firstLock.Dispose();
        }
        else
        {
            semaphore.Release();
        }

        release.SetResult();
        (await holder.WithTimeout("the holder")).Should().Be((true, true), "a wait granted before its await goes on in the region ([X-LOCK])");
        if (kind == "lock")
        {
            semaphore.Release();
        }
        else
        {
            firstLock.Dispose();
        }

        lk.IsHeld.Should().BeFalse();
        semaphore.CurrentCount.Should().Be(1);
    }

    [Fact]
    public async Task OnALoop_AHelperThatTakesTheLockAndReturnsTheReleaser_LeavesItsCallerOutsideTheRegion()
    {
        // As documented (concepts.md, "Priority inversion"): an await moves only the method that awaits; the caller of such a helper
        // holds the lock (it excludes) in its own context, which a waiter cannot raise.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock();
        (bool InRegionInHelper, bool SameContextAfter, bool Held) seen = await loop.Context.InvokeAsync(
            async () =>
            {
                SynchronizationContext before = SynchronizationContext.Current!;
                bool inRegionInHelper = false;
                async Task<PriorityLock.Releaser> TakeAsync()
                {
                    PriorityLock.Releaser releaser = await lk.LockAsync();
                    inRegionInHelper = IsRegionOtherThan(before);
                    return releaser;
                }

                using (await TakeAsync())
                {
                    return (inRegionInHelper, ReferenceEquals(SynchronizationContext.Current, before), lk.IsHeld);
                }
            },
            1);
        seen.Should().Be((true, true, true));
        lk.IsHeld.Should().BeFalse();
    }

    private static bool IsRegionOtherThan(SynchronizationContext before) =>
        SynchronizationContext.Current is PrioritySynchronizationContext now && !ReferenceEquals(now, before);

    private static async Task WaitUntilAsync(Func<bool> condition, string what)
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
