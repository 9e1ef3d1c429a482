using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Scopes;

/// <summary>
/// <see cref="TaskScope"/>: children that cannot vanish (K1-K3 in Scopes/TaskScope.cs). No timing: every "later" is a gate the test
/// opens, every wait is bounded.
/// </summary>
public sealed class TaskScopeTests
{
    private static readonly PriorityContextOptions ThreeLevels = new() { Levels = 3 };

    [Fact]
    public async Task RunAsync_BodyEndsFirst_CompletesOnlyWhenEveryChildHasEnded()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var childEnded = false;
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(scope =>
            {
                scope.Start(async _ =>
                {
                    await gate.Task;
                    childEnded = true;
                });
                return Task.CompletedTask; // the body ends at once
            })),
            0).WithTimeout("opening the scope");

        loop.Context.Drain(); // whatever the body's end queued has run: a scope that completes with its body has completed by now
        scope.IsCompleted.Should().BeFalse("the child is still running");
        gate.SetResult();
        await scope.WithTimeout("the scope");
        childEnded.Should().BeTrue();
    }

    [Fact]
    public async Task RunAsync_ChildFaults_CancelsTheSiblings_AndRethrowsAfterTheyEnded()
    {
        var siblingSawCancellation = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var releaseSibling = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var failure = new InvalidOperationException("lease lost");
        bool siblingEnded = false;
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();

        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(async scope =>
            {
                scope.Start(async token =>
                {
                    await using (token.Register(() => siblingSawCancellation.TrySetResult()))
                    {
                        await releaseSibling.Task; // ends only when the test says so, after it saw the cancellation
                    }

                    siblingEnded = true;
                    token.ThrowIfCancellationRequested();
                });
                scope.Start(_ => Task.FromException(failure), 2);
                await Task.Yield();
            })),
            0).WithTimeout("opening the scope");

        await siblingSawCancellation.Task.WithTimeout("the sibling's cancellation");
        scope.IsCompleted.Should().BeFalse("the scope waits for the cancelled sibling to end");
        releaseSibling.SetResult();
        Func<Task> awaiting = () => scope.WithTimeout("the scope");
        (await awaiting.Should().ThrowExactlyAsync<InvalidOperationException>()).Which.Should().BeSameAs(failure);
        siblingEnded.Should().BeTrue();
        scope.Exception!.InnerExceptions.Should().Equal(failure); // the sibling's cancellation is not a failure
    }

    [Fact]
    public async Task RunAsync_TwoChildrenFault_FirstIsThrown_BothAreReachable()
    {
        var first = new InvalidOperationException("first");
        var second = new ArgumentException("second");
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(scope =>
            {
                scope.Start(_ => Task.FromException(first));
                scope.Start(_ => throw second); // thrown synchronously: a failure all the same
                return Task.CompletedTask;
            })),
            0).WithTimeout("opening the scope");

        Func<Task> awaiting = () => scope.WithTimeout("the scope");
        (await awaiting.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(first);
        scope.Exception!.InnerExceptions.Should().Equal(first, second);
    }

    [Fact]
    public async Task RunAsync_BodyThrows_ChildrenAreCancelledAndAwaited_ThenTheBodysExceptionSurfaces()
    {
        var failure = new FormatException("bad message");
        bool childEndedCancelled = false;
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(async scope =>
            {
                scope.Start(async token =>
                {
                    try
                    {
                        await Task.Delay(Timeout.Infinite, token);
                    }
                    catch (OperationCanceledException)
                    {
                        childEndedCancelled = true;
                        throw;
                    }
                });
                await Task.Yield();
                throw failure;
            })),
            0).WithTimeout("opening the scope");

        Func<Task> awaiting = () => scope.WithTimeout("the scope");
        (await awaiting.Should().ThrowAsync<FormatException>()).Which.Should().BeSameAs(failure);
        childEndedCancelled.Should().BeTrue();
    }

    [Fact]
    public async Task RunAsync_BodyCancelled_ScopeIsCancelled_ChildrenToo()
    {
        using var outer = new CancellationTokenSource();
        var childStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(
                async scope =>
                {
                    scope.Start(async token =>
                    {
                        childStarted.SetResult();
                        await Task.Delay(Timeout.Infinite, token);
                    });
                    await Task.Delay(Timeout.Infinite, outer.Token);
                },
                outer.Token)),
            0).WithTimeout("opening the scope");

        await childStarted.Task.WithTimeout("the child");
        outer.Cancel();
        Func<Task> awaiting = () => scope.WithTimeout("the scope");
        await awaiting.Should().ThrowAsync<OperationCanceledException>();
        scope.IsCanceled.Should().BeTrue();
    }

    [Fact]
    public async Task Cancel_StopsAKeeper_ScopeSucceeds_WithTheBodysResult()
    {
        int renewals = 0;
        // A clock that never moves: the renewal interval never ends, so the keeper renews exactly once before the body cancels it.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, TimeProvider = new FakeTimeProvider() });
        await using var disposeLoop = loop.BoundedDisposal();
        int result = await loop.Context.InvokeAsync(
            () => TaskScope.RunAsync(async scope =>
            {
                scope.Start(
                    async token =>
                    {
                        while (!token.IsCancellationRequested)
                        {
                            renewals++;
                            try
                            {
                                await Priority.Delay(TimeSpan.FromMilliseconds(1), token); // a renewal interval: the loop goes on below
                            }
                            catch (OperationCanceledException)
                            {
                                return; // cancelled between renewals: a clean stop
                            }
                        }
                    },
                    2);
                await Priority.Yield();
                scope.Cancel(); // the work is done: stop the keeper
                return 42;
            }),
            0).WithTimeout("the scope");

        result.Should().Be(42);
        renewals.Should().Be(1);
    }

    [Fact]
    public async Task StartAsync_ChildRunsAtItsOwnLevel_OnTheLoop_QueuedBehindThatLevel()
    {
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        var order = new List<string>();
        (int Level, int Thread) seen = await loop.Context.InvokeAsync(
            () => TaskScope.RunAsync(async scope =>
            {
                SynchronizationContext.Current!.Post(_ => order.Add("posted at 0 before"), null);
                Task<(int, int)> child = scope.StartAsync(
                    async _ =>
                    {
                        order.Add("child");
                        await Task.Yield();
                        return (PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId);
                    },
                    2);
                order.Add("body goes on");
                return await child;
            }),
            0).WithTimeout("the scope");

        seen.Level.Should().Be(2, "the child's awaits resume at its level");
        seen.Thread.Should().Be(loop.ManagedThreadId);
        order.Should().Equal("body goes on", "child", "posted at 0 before"); // queued, at level 2: before level 0's older item
    }

    [Fact]
    public async Task Child_EndingOffTheLoop_IsCountedAndItsFaultSurfaces()
    {
        var failure = new TimeoutException("off the loop");
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(scope =>
            {
                scope.Start(async token =>
                {
#pragma warning disable PA0001 // a pool timer on purpose: the child must end off the loop
                    await Task.Delay(1, token).ConfigureAwait(false); // ends on a pool thread
#pragma warning restore PA0001
                    throw failure;
                });
                return Task.CompletedTask;
            })),
            0).WithTimeout("opening the scope");

        Func<Task> awaiting = () => scope.WithTimeout("the scope");
        (await awaiting.Should().ThrowAsync<TimeoutException>()).Which.Should().BeSameAs(failure);
    }

    [Fact]
    public async Task Run_RootChildren_RunReturnsOnlyWhenTheyEnded()
    {
        var ended = new List<int>();
        var clock = new FakeTimeProvider();
        using var armed = new CountdownEvent(3);
        // Moves the clock on once every child waits on it, from outside the loop (which Run blocks in).
        Task advance = Task.Run(() =>
        {
            armed.WaitOrFail("the children to arm their delays");
            clock.Advance(TimeSpan.FromMilliseconds(5));
        });
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    for (int i = 0; i < 3; i++)
                    {
                        int id = i;
                        Priority.Start(
                            async token =>
                            {
                                ValueTask delay = Priority.Delay(TimeSpan.FromMilliseconds(5), token);
                                armed.Signal();
                                await delay;
                                ended.Add(id);
                            },
                            1);
                    }

                    return Task.CompletedTask; // the entry ends at once; the loop waits for its children
                },
                new PriorityContextOptions { Levels = 3, TimeProvider = clock }),
            "Run");

        // Not IsCompletedSuccessfully at once: Advance fires the last timer and may still be returning when the loop has run the
        // rest and Run has returned.
        await advance.WithTimeout("the thread that moved the clock to return");

        ended.Should().BeEquivalentTo([0, 1, 2]);
    }

    [Fact]
    public void Run_RootChildFaults_SiblingsCancelled_RunRethrowsTheChildsExceptionAsIs()
    {
        var failure = new InvalidOperationException("keeper failed");
        bool siblingCancelled = false;
        Exception? thrown = null;
        TestTimeout.OnOwnThread(
            () =>
            {
                try
                {
                    PriorityContext.Run(
                        async () =>
                        {
                            Priority.Start(async token =>
                            {
                                try
                                {
                                    await Priority.Delay(Timeout.InfiniteTimeSpan, token);
                                }
                                catch (OperationCanceledException)
                                {
                                    siblingCancelled = true;
                                    throw;
                                }
                            });
                            Priority.Start(_ => throw failure, 2);
                            await Priority.Yield();
                        },
                        ThreeLevels);
                }
                catch (Exception ex)
                {
                    thrown = ex;
                }
            },
            "Run");

        thrown.Should().BeSameAs(failure);
        siblingCancelled.Should().BeTrue();
    }

    [Fact]
    public void Run_EntryThrows_RootChildrenAreCancelled_AndTheEntrysExceptionSurfaces()
    {
        var failure = new FormatException("entry failed");
        bool childCancelled = false;
        Exception? thrown = null;
        TestTimeout.OnOwnThread(
            () =>
            {
                try
                {
                    PriorityContext.Run(async () =>
                    {
                        Priority.Start(async token =>
                        {
                            try
                            {
                                await Priority.Delay(Timeout.InfiniteTimeSpan, token);
                            }
                            catch (OperationCanceledException)
                            {
                                childCancelled = true;
                                throw;
                            }
                        });
                        await Priority.Yield();
                        throw failure;
                    });
                }
                catch (Exception ex)
                {
                    thrown = ex;
                }
            },
            "Run");

        thrown.Should().BeSameAs(failure);
        childCancelled.Should().BeTrue();
    }

    [Fact]
    public async Task PriorityContextThread_CompletionWaitsForRootChildren_AndFaultsWithAllTheirExceptions()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var first = new InvalidOperationException("first");
        var second = new InvalidOperationException("second");
        var thread = new PriorityContextThread(ThreeLevels);
        await thread.Context.InvokeAsync(
            () =>
            {
                Priority.Start(async _ =>
                {
                    await gate.Task;
                    throw first;
                });
                Priority.Start(async _ =>
                {
                    await gate.Task;
                    throw second;
                });
                return Task.CompletedTask;
            },
            0).WithTimeout("starting the children");

        thread.Complete();
        thread.Context.WaitUntilParked(); // idle, and still there: a loop that stopped with its children outstanding never parks
        thread.Completion.IsCompleted.Should().BeFalse("the children are still running");
        gate.SetResult();
        Func<Task> completion = () => thread.Completion.WithTimeout("the thread");
        await completion.Should().ThrowAsync<InvalidOperationException>();
        thread.Completion.Exception!.InnerExceptions.Should().BeEquivalentTo(new[] { first, second });
    }

    [Fact]
    public async Task QueuedChild_DroppedBecauseTheLoopFaulted_EndsWithObjectDisposedException_ScopeDoesNotHang()
    {
        var thread = new PriorityContextThread(ThreeLevels);
        Task? child = null;
        var failure = new InvalidOperationException("the loop faults");
        await thread.Context.InvokeAsync(
            () =>
            {
                child = PriorityContext.Current!.Scope.StartAsync(_ => Task.CompletedTask, 0); // queued at level 0 ...
                SynchronizationContext.Current!.Post(_ => throw failure, null); // ... behind an item that faults the loop
                return Task.CompletedTask;
            },
            2).WithTimeout("starting the child");

        Func<Task> completion = () => thread.Completion.WithTimeout("the thread");
        (await completion.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(failure);
        Func<Task> awaitingChild = () => child!.WithTimeout("the dropped child");
        await awaitingChild.Should().ThrowAsync<ObjectDisposedException>();
    }

    // ---- Bad input ---------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task BadInput_NullDelegates_ArgumentNullException()
    {
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        await loop.Context.InvokeAsync(
            () =>
            {
#pragma warning disable PA0003 // the call throws before any task exists: the test checks the argument check
                Action nullBody = () => TaskScope.RunAsync(null!);
#pragma warning restore PA0003
                nullBody.Should().Throw<ArgumentNullException>().WithParameterName("body");
                Action nullChild = () => loop.Context.Scope.Start(null!);
                nullChild.Should().Throw<ArgumentNullException>().WithParameterName("child");
                Action nullStatic = () => Priority.Start(null!);
                nullStatic.Should().Throw<ArgumentNullException>().WithParameterName("child");
                Action badLevel = () => loop.Context.Scope.Start(_ => Task.CompletedTask, 3);
                badLevel.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("level");
                loop.Context.Scope.RunningCount.Should().Be(0, "nothing was started");
                return Task.CompletedTask;
            },
            0).WithTimeout("the checks");
    }

    [Fact]
    public async Task BadInput_StartAfterTheScopeCompleted_ThrowsAndStartsNothing()
    {
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        string message = await loop.Context.InvokeAsync(
            async () =>
            {
                TaskScope? leaked = null;
                await TaskScope.RunAsync(scope =>
                {
                    leaked = scope;
                    return Task.CompletedTask;
                });
                leaked!.IsCompleted.Should().BeTrue();
                bool ran = false;
                Action late = () => leaked.Start(_ =>
                {
                    ran = true;
                    return Task.CompletedTask;
                });
                string text = late.Should().Throw<InvalidOperationException>().Which.Message;
                await Priority.Yield();
                ran.Should().BeFalse();
                leaked.RunningCount.Should().Be(0);
                return text;
            },
            0).WithTimeout("the checks");

        message.Should().Contain("has completed").And.Contain("not started");
    }

    [Fact]
    public async Task BadInput_StartFromAnotherThread_ThrowsAndStartsNothing_TheScopeStillCompletes()
    {
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        var scopeOpen = new TaskCompletionSource<TaskScope>(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task scopeTask = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(async scope =>
            {
                scopeOpen.SetResult(scope);
                await release.Task;
            })),
            0).WithTimeout("opening the scope");
        TaskScope open = await scopeOpen.Task.WithTimeout("the scope");

        Action fromPool = () => open.Start(_ => Task.CompletedTask, 0);
        fromPool.Should().Throw<InvalidOperationException>().WithMessage("*does not run the PriorityContext*InvokeAsync*");
        open.RunningCount.Should().Be(0);
        release.SetResult();
        await scopeTask.WithTimeout("the scope");
    }

    [Fact]
    public async Task BadInput_RunAsyncOrStartOutsideAContext_InvalidOperationException()
    {
        await Task.Run(() =>
        {
#pragma warning disable PA0003, PA0004 // off the loop on purpose: the test checks the error there
            Action open = () => TaskScope.RunAsync(_ => Task.CompletedTask);
            open.Should().Throw<InvalidOperationException>().WithMessage("*TaskScope.RunAsync*PriorityContext*");
            Action start = () => Priority.Start(_ => Task.CompletedTask);
#pragma warning restore PA0003, PA0004
            start.Should().Throw<InvalidOperationException>().WithMessage("*Start*PriorityContext*");
        });
    }

    [Fact]
    public async Task BadInput_BodyOrChildReturnsNull_TheScopeFailsWithAClearMessage()
    {
        var loop = new PriorityContextThread(ThreeLevels);
        await using var disposeLoop = loop.BoundedDisposal();
        Task scope = await loop.Context.InvokeAsync(
            () => Task.FromResult(TaskScope.RunAsync(scope =>
            {
                scope.Start(_ => null!);
                return Task.CompletedTask;
            })),
            0).WithTimeout("opening the scope");

        Func<Task> awaiting = () => scope.WithTimeout("the scope");
        await awaiting.Should().ThrowAsync<InvalidOperationException>().WithMessage("*returned null instead of a Task*");
    }
}
