using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// The pool's own threads and its end: disposal from one of its threads only completes, in every phase (also from a WorkDropped handler
/// as the last thread ends); a throwing callback on the root children's token never escapes into a pool thread; and after a fault the
/// awaits of the pool throw instead of going on at their old level.
/// </summary>
public sealed class PoolFaultAndDisposeTests
{
    private static PriorityThreadPoolOptions Options(string name) => new() { ThreadCount = 2, Levels = 2, Name = name };

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Dispose_FromAWorkDroppedHandlerOnTheLastThreadAsThePoolEnds_OnlyCompletes(bool disposeAsync)
    {
        // The last thread raises WorkDropped for the timer still armed at the end, after it left its loop: it is the thread that
        // completes Completion, so waiting for it there would never end.
        var pool = new PriorityThreadPool(Options($"dispose-in-drop-{disposeAsync}"));
        var handled = new TaskCompletionSource<(bool OnPoolThread, bool ReturnedCompleted)>(TaskCreationOptions.RunContinuationsAsynchronously);
        pool.WorkDropped += (_, _) =>
        {
            bool onPoolThread = Thread.CurrentThread.Name?.StartsWith(pool.Name, StringComparison.Ordinal) == true;
            bool returnedCompleted = true;
            if (disposeAsync)
            {
                returnedCompleted = IsCompletedAtOnce(pool.DisposeAsync());
            }
            else
            {
                pool.Dispose();
            }

            handled.TrySetResult((onPoolThread, returnedCompleted));
        };
        using ITimer timer = pool.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);

        pool.Complete();
        (bool onPoolThread, bool returnedCompleted) = await handled.Task.WithTimeout("the WorkDropped handler to return from the disposal");
        await pool.Completion.WithTimeout("the pool to end");
        onPoolThread.Should().BeTrue("the armed timer is dropped by the pool's last thread");
        returnedCompleted.Should().BeTrue("from the pool's own thread DisposeAsync only completes: its task is already completed");
    }

    private static bool IsCompletedAtOnce(ValueTask disposal) => disposal.IsCompleted;

    /// <summary>Starts a root child that registers a callback throwing <paramref name="failure"/> on its token, then waits until the
    /// token is cancelled (and ends quietly then); returns once the callback is registered.</summary>
    private static async Task StartChildWithAThrowingTokenCallback(PriorityThreadPool pool, Exception failure)
    {
        var registered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await pool.InvokeAsync(() =>
        {
            Start(async token =>
            {
                token.Register(() => throw failure);
                registered.SetResult();
                try
                {
                    await Delay(Timeout.InfiniteTimeSpan, token);
                }
                catch (OperationCanceledException)
                {
                    // Cancelled: the child ends quietly.
                }
            });
            return Task.CompletedTask;
        }).WithTimeout("starting the child");
        await registered.Task.WithTimeout("the child to register its callback");
    }

    [Fact]
    public async Task Fault_WhenARootChildsTokenCallbackThrows_CompletionReportsTheFaultAndTheCallbacksException()
    {
        // The fault cancels the root children's token on the faulting thread, inside its dispatch: the callback's exception must not
        // escape into that thread's loop (it would end the process), and the parked thread must still be woken to leave.
        var pool = new PriorityThreadPool(Options("fault-token-callback"));
        var boom = new InvalidOperationException("an item faults the pool");
        var callbackFailure = new ApplicationException("a root child's token callback throws");
        await StartChildWithAThrowingTokenCallback(pool, callbackFailure);

        pool.GetSynchronizationContext(0).Post(_ => throw boom, null);

        await FluentActions.Awaiting(() => pool.Completion.WithTimeout("the faulted pool to end")).Should().ThrowAsync<InvalidOperationException>();
        pool.State.Should().Be(PrioritySchedulerState.Faulted);
        pool.Completion.Exception!.InnerExceptions.Should().HaveCount(2);
        pool.Completion.Exception.InnerExceptions[0].Should().BeSameAs(boom, "the fault is what stopped the pool: it comes first");
        pool.Completion.Exception.InnerExceptions[1].Should().BeSameAs(callbackFailure);
    }

    [Fact]
    public async Task RootChildFailure_WhenASiblingsTokenCallbackThrows_CompletionReportsBoth()
    {
        // A child's failure cancels the other root children from inside that child's end: a throwing callback becomes a root failure,
        // and the failing child's hold on the pool is still released (else the pool would never end).
        var pool = new PriorityThreadPool(Options("child-token-callback"));
        var childFailure = new InvalidOperationException("a root child fails");
        var callbackFailure = new ApplicationException("a sibling's token callback throws");
        await StartChildWithAThrowingTokenCallback(pool, callbackFailure);

        await pool.InvokeAsync(() =>
        {
            Start(_ => Task.FromException(childFailure));
            return Task.CompletedTask;
        }).WithTimeout("starting the failing child");
        pool.Complete();

        await FluentActions.Awaiting(() => pool.Completion.WithTimeout("the pool to end after its children")).Should().ThrowAsync<InvalidOperationException>();
        pool.State.Should().Be(PrioritySchedulerState.Completed, "a child's failure is not a fault of the pool");
        pool.Completion.Exception!.InnerExceptions.Should().Equal(childFailure, callbackFailure);
    }

    [Fact]
    public async Task ScopeCancel_WhenATokenCallbackThrows_DoesNotThrow_AndCompletionReportsIt()
    {
        // As a root scope's Cancel() on a PriorityContext: the callback's exception is a failure of the root children.
        var pool = new PriorityThreadPool(Options("cancel-token-callback"));
        var callbackFailure = new ApplicationException("a root child's token callback throws");
        await StartChildWithAThrowingTokenCallback(pool, callbackFailure);

        FluentActions.Invoking(pool.Scope.Cancel).Should().NotThrow();
        pool.Complete();
        (await FluentActions.Awaiting(() => pool.Completion.WithTimeout("the pool to end")).Should().ThrowAsync<ApplicationException>())
            .Which.Should().BeSameAs(callbackFailure);
    }

    public enum AwaitKind
    {
        PrioritizeAnotherLevel,
        PrioritizeSameLevel,
        Yield,
        Checkpoint,
    }

    [Theory]
    [InlineData(AwaitKind.PrioritizeAnotherLevel)]
    [InlineData(AwaitKind.PrioritizeSameLevel)]
    [InlineData(AwaitKind.Yield)]
    [InlineData(AwaitKind.Checkpoint)]
    public async Task Await_OnAPoolThreadAfterThePoolFaulted_ThrowsObjectDisposed(AwaitKind kind)
    {
        // An item still running when another one faults the pool: its next await of the pool must not complete at once and go on at its
        // old level as if it had moved (a queued continuation would be dropped: the method ends with ObjectDisposedException).
        using var gate = new ManualResetEventSlim();
        var pool = new PriorityThreadPool(Options($"await-after-fault-{kind}"));
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<(Exception? Thrown, int LevelAfter)> running = pool.InvokeAsync(async () =>
        {
            started.SetResult();
            gate.WaitOrFail("the test to let the running item go on after the fault");
            try
            {
                switch (kind)
                {
                    case AwaitKind.PrioritizeAnotherLevel:
                        await Prioritize(1);
                        break;
                    case AwaitKind.PrioritizeSameLevel:
                        await Prioritize(0);
                        break;
                    case AwaitKind.Yield:
                        await Yield();
                        break;
                    case AwaitKind.Checkpoint:
                        await Checkpoint();
                        break;
                }
            }
            catch (ObjectDisposedException ex)
            {
                return (ex, -1);
            }

            return ((Exception?)null, CurrentLevel);
        }, level: 0);
        await started.Task.WithTimeout("the running item to start");

        var boom = new InvalidOperationException("boom");
        pool.GetSynchronizationContext(1).Post(_ => throw boom, null);
        PriorityThreadPoolTests.WaitUntil(() => pool.State == PrioritySchedulerState.Faulted, "the other thread to publish the fault");
        gate.Set();

        (Exception? thrown, int levelAfter) = await running.WithTimeout("the running item to end");
        thrown.Should().BeOfType<ObjectDisposedException>($"the pool faulted, so the method must not go on (it went on at level {levelAfter})")
            .Which.Message.Should().Contain("faulted");
        (await FluentActions.Awaiting(() => pool.Completion.WithTimeout("the pool")).Should().ThrowAsync<InvalidOperationException>())
            .Which.Should().BeSameAs(boom);
    }
}
