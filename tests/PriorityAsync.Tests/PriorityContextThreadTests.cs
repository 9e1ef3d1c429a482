using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests;

/// <summary>Rules 8 to 10 for the dedicated loop thread: exceptions, parking, completion and disposal.</summary>
public class PriorityContextThreadTests
{
    [Fact]
    public async Task Thread_IsNamedBackgroundThread_RunningTheContext()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "worker" });
        await using var disposeLoop = loop.BoundedDisposal();
        var (name, background) = await loop.Context.RunOn(0, () => Task.FromResult((Thread.CurrentThread.Name, Thread.CurrentThread.IsBackground))).WithTimeout("the body");
        name.Should().Be("worker");
        background.Should().BeTrue();
        loop.Context.Name.Should().Be("worker");
        loop.Context.State.Should().Be(PrioritySchedulerState.Running);
    }

    [Fact]
    public async Task UnhandledException_Handled_LoopKeepsRunning()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var seen = new List<Exception>();
        loop.UnhandledException += (_, e) =>
        {
            seen.Add(e.Exception);
            e.Handled = true;
        };
        var boom = new InvalidOperationException("boom");
        loop.Context.GetSynchronizationContext(1).Post(_ => throw boom, null);
        loop.Context.Drain();
        seen.Should().ContainSingle().Which.Should().BeSameAs(boom);
        loop.Context.State.Should().Be(PrioritySchedulerState.Running);
        loop.Completion.IsCompleted.Should().BeFalse();
    }

    [Fact]
    public async Task UnhandledException_NotHandled_FaultsCompletion_AndDisposeRethrows()
    {
        var loop = new PriorityContextThread();
        int raised = 0;
        loop.UnhandledException += (_, _) => raised++;
        var boom = new InvalidOperationException("boom");
        loop.Context.GetSynchronizationContext(0).Post(_ => throw boom, null);

        (await FluentActions.Awaiting(() => loop.Completion.WithTimeout("the faulted completion")).Should().ThrowAsync<InvalidOperationException>())
            .Which.Should().BeSameAs(boom);
        raised.Should().Be(1);
        loop.Context.State.Should().Be(PrioritySchedulerState.Faulted);
        await FluentActions.Awaiting(() => loop.DisposeOrFailAsync()).Should().ThrowAsync<InvalidOperationException>();
    }

    [Fact]
    public async Task UnhandledException_HandlerThrows_FaultsWithTheHandlersException()
    {
        var loop = new PriorityContextThread();
        loop.UnhandledException += (_, _) => throw new FormatException("handler failed");
        loop.Context.GetSynchronizationContext(0).Post(_ => throw new InvalidOperationException("item"), null);
        await FluentActions.Awaiting(() => loop.Completion.WithTimeout("the faulted completion")).Should().ThrowAsync<FormatException>();
    }

    [Fact]
    public async Task Complete_WithQueuedWork_RunsAllOfItFirst()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        var ran = new List<string>();
        using (loop.Context.PauseLoop())
        {
            for (int i = 0; i < 5; i++)
            {
                int n = i;
                loop.Context.GetSynchronizationContext(i % 3).Post(_ =>
                {
                    ran.Add($"item {n}");
                    if (n == 0)
                    {
                        // Work queued by queued work also runs before the loop stops.
                        loop.Context.GetSynchronizationContext(0).Post(_ => ran.Add("follow-up"), null);
                    }
                }, null);
            }

            loop.Complete();
        }

        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish");
        ran.Should().Equal("item 2", "item 1", "item 4", "item 0", "item 3", "follow-up");
        loop.Context.State.Should().Be(PrioritySchedulerState.Completed);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(0);
    }

    [Fact]
    public async Task Complete_IsIdempotent_AndDisposeWaits()
    {
        var loop = new PriorityContextThread();
        loop.Complete();
        loop.Complete();
        TestTimeout.OnOwnThread(loop.Dispose, "Dispose"); // it blocks until the loop stopped: on a thread whose join is bounded
        loop.Completion.IsCompletedSuccessfully.Should().BeTrue("Dispose blocks until the loop stopped");
        await loop.DisposeOrFailAsync();
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Dispose_FromTheLoopThreadItself_ReturnsAtOnceAndTheLoopEnds(bool disposeAsync)
    {
        // Dispose and DisposeAsync on the loop thread cannot wait for their own loop: each only completes it and returns (DisposeAsync
        // with a completed task); the loop ends once the item that disposed it returns.
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = $"dispose-itself-{disposeAsync}" });
        var returned = new TaskCompletionSource<(bool OnLoopThread, bool ReturnedCompleted, bool LoopEndedMeanwhile)>(
            TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.GetSynchronizationContext(0).Post(
            _ =>
            {
                bool returnedCompleted = true;
                if (disposeAsync)
                {
                    returnedCompleted = IsCompletedAtOnce(loop.DisposeAsync());
                }
                else
                {
                    loop.Dispose();
                }

                returned.TrySetResult((Environment.CurrentManagedThreadId == loop.ManagedThreadId, returnedCompleted, loop.Completion.IsCompleted));
            },
            null);

        (bool onLoopThread, bool returnedCompleted, bool loopEndedMeanwhile) = await returned.Task.WithTimeout("the disposal on the loop thread to return");
        await loop.Completion.WithTimeout("the loop to finish after disposing itself");
        onLoopThread.Should().BeTrue();
        returnedCompleted.Should().BeTrue("from the loop thread DisposeAsync only completes: its task is already completed");
        loopEndedMeanwhile.Should().BeFalse("the loop ends after the item that disposed it, not inside it");
        loop.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Dispose_FromAWorkDroppedHandlerOnTheLoopThreadAsItEnds_OnlyCompletes(bool disposeAsync)
    {
        // The loop thread raises WorkDropped for the timer still armed at the end after it stopped counting itself as the loop thread;
        // it completes Completion afterwards, so waiting for it there would never end.
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = $"dispose-in-drop-{disposeAsync}" });
        var handled = new TaskCompletionSource<(bool OnLoopThread, bool ReturnedCompleted)>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.WorkDropped += (_, _) =>
        {
            bool returnedCompleted = true;
            if (disposeAsync)
            {
                returnedCompleted = IsCompletedAtOnce(loop.DisposeAsync());
            }
            else
            {
                loop.Dispose();
            }

            handled.TrySetResult((Environment.CurrentManagedThreadId == loop.ManagedThreadId, returnedCompleted));
        };
        using ITimer timer = loop.Context.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);

        loop.Complete();
        (bool onLoopThread, bool returnedCompleted) = await handled.Task.WithTimeout("the WorkDropped handler to return from the disposal");
        await loop.Completion.WithTimeout("the loop to end");
        onLoopThread.Should().BeTrue("the armed timer is dropped by the loop thread as the loop ends");
        returnedCompleted.Should().BeTrue("from the loop thread DisposeAsync only completes: its task is already completed");
    }

    private static bool IsCompletedAtOnce(ValueTask disposal) => disposal.IsCompleted;

    [Fact]
    public async Task IdleLoop_Parks_AndAPostFromAnotherThreadWakesIt()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { IdleSpinCount = 0 });
        await using var disposeLoop = loop.BoundedDisposal();
        loop.Context.WaitUntilParked();
        long wakesBefore = loop.Context.WakeCount;

        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.GetSynchronizationContext(0).Post(_ => ran.SetResult(), null);
        await ran.Task.WithTimeout("the parked loop to wake");
        loop.Context.WakeCount.Should().Be(wakesBefore + 1);
    }

    [Fact]
    public async Task BusyLoop_IsNotSignalled_PostsOnlyWakeAParkedLoop()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        long wakes;
        using (loop.Context.PauseLoop())
        {
            wakes = loop.Context.WakeCount;
            for (int i = 0; i < 10_000; i++)
            {
                loop.Context.GetSynchronizationContext(0).Post(_ => { }, null);
            }

            loop.Context.WakeCount.Should().Be(wakes, "the loop was running, not parked: no signal is needed");
        }

        loop.Context.Drain();
    }

    [Fact]
    public async Task Send_FromManyThreads_EachBlocksUntilItsOwnItemRan()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        int total = 0;
        // On a thread of its own, whose join is bounded: a Send blocks without a timeout until its item ran.
        TestTimeout.OnOwnThread(
            () => Parallel.For(0, 8, _ =>
            {
                for (int i = 0; i < 500; i++)
                {
                    int before = -1;
                    loop.Context.GetSynchronizationContext(i % 3).Send(_ => before = total++, null);
                    before.Should().BeGreaterThanOrEqualTo(0);
                }
            }),
            "the senders");
        total.Should().Be(8 * 500);
    }

    [Fact]
    public async Task PrioritizeFromOtherThread_AfterTheLoopFinished_ThrowsObjectDisposed()
    {
        var loop = new PriorityContextThread();
        await loop.DisposeOrFailAsync();
        await FluentActions.Awaiting(() => HopAsync().WithTimeout("the hop onto the finished loop")).Should().ThrowAsync<ObjectDisposedException>();

        async Task HopAsync() => await loop.Context.Prioritize(1);
    }

    [Fact]
    public async Task Snapshot_ReportsPendingAndRunPerLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        using (loop.Context.PauseLoop())
        {
            for (int i = 0; i < 6; i++)
            {
                loop.Context.GetSynchronizationContext(i % 2).Post(_ => { }, null);
            }

            var paused = loop.Context.GetSnapshot();
            paused.State.Should().Be(PrioritySchedulerState.Running);
            paused.PendingPerLevel.Should().Equal(3, 3, 0);
            paused.TotalPending.Should().Be(6);
            paused.RunPerLevel[2].Should().Be(1, "the pause item itself runs at level 2");
            paused.OutstandingOperations.Should().Be(1, "the thread's own hold");
        }

        loop.Context.Drain();
        var after = loop.Context.GetSnapshot();
        after.PendingPerLevel.Should().Equal(0, 0, 0);
        after.RunPerLevel.Should().Equal(3 + 1, 3, 1);
        after.DroppedCount.Should().Be(0);
    }

    [Fact]
    public async Task ToString_DescribesContextLevelAndScheduler()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2, Name = "w" });
        await using var disposeLoop = loop.BoundedDisposal();
        loop.Context.ToString().Should().Contain("w").And.Contain("2 levels");
        loop.Context.GetSynchronizationContext(1).ToString().Should().Be("w level 1");
        loop.Context.GetScheduler(0).ToString().Should().Contain("level 0");
    }
}
