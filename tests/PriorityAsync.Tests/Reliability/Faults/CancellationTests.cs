using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Faults;

/// <summary>
/// A task queued through a level's TaskScheduler and cancelled before it runs never runs: it completes as cancelled when the loop
/// reaches its queue entry (TryExecuteTask refuses a cancelled task; the lock-free queue cannot remove an entry early). Racing cancellation against the loop: a task
/// either ran to completion (it started before the cancellation took effect) or is cancelled and its delegate never ran.
/// </summary>
public sealed class CancellationTests
{
    [Fact]
    public async Task QueuedTask_CancelledBeforeItRuns_NeverRuns_CompletesCancelled()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        using var gate = new ManualResetEventSlim(false);
        using var blocking = new ManualResetEventSlim(false);
        loop.Context.GetSynchronizationContext(2).Post(_ =>
        {
            blocking.Set();
            gate.Wait(TestTimeout.Unexpected);
        }, null);
        blocking.WaitOrFail("the loop to be busy");

        using var cts = new CancellationTokenSource();
        int ran = 0;
        Task task = loop.Context.GetTaskFactory(1).StartNew(() => Interlocked.Increment(ref ran), cts.Token);
        int afterwards = 0;
        Task later = loop.Context.GetTaskFactory(1).StartNew(() => Interlocked.Increment(ref afterwards));
        loop.Context.GetSnapshot().PendingPerLevel[1].Should().Be(2, "both tasks are queued behind the busy loop");

        try
        {
            cts.Cancel();

            // The scheduler cannot take an entry out of its lock-free queue (TryDequeue is not overridden), so the task completes as
            // cancelled when the loop reaches its entry, without running it.
            task.IsCompleted.Should().BeFalse();
        }
        finally
        {
            gate.Set();
        }

        await later.WithTimeout("the task queued behind the cancelled one");
        Func<Task> awaitCancelled = () => task.WithTimeout("the cancelled task");
        await awaitCancelled.Should().ThrowAsync<TaskCanceledException>();
        Volatile.Read(ref ran).Should().Be(0, "a cancelled task never runs, although its queue entry was reached");
        Volatile.Read(ref afterwards).Should().Be(1);
        task.Status.Should().Be(TaskStatus.Canceled);
    }

    [Fact]
    public async Task CancelRacingTheLoop_EveryTaskEitherRanOrWasCancelledWithoutRunning()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var random = new Random(7);
        int ranButCancelled = 0;
        int completed = 0;
        int cancelled = 0;
        for (int round = 0; round < 2_000; round++)
        {
            using var cts = new CancellationTokenSource();
            int ran = 0;
            Task task = loop.Context.GetTaskFactory(random.Next(3)).StartNew(() => Interlocked.Exchange(ref ran, 1), cts.Token);
            if (random.Next(2) == 0)
            {
                Thread.SpinWait(random.Next(0, 2_000));
            }

            cts.Cancel();
            try
            {
                await task.WithTimeout("a raced task");
                completed++;
                Volatile.Read(ref ran).Should().Be(1);
            }
            catch (TaskCanceledException)
            {
                cancelled++;
                if (Volatile.Read(ref ran) != 0)
                {
                    ranButCancelled++;
                }
            }
        }

        ranButCancelled.Should().Be(0, "a task observed as cancelled must never have run");
        (completed + cancelled).Should().Be(2_000);
    }
}
