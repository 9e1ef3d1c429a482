using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

/// <summary>A hosted worker's children (its context's root scope): cancelled by the stopping token, awaited before the worker stops,
/// and a child's fault is the worker's fault.</summary>
public sealed class ChildrenTests
{
    [Fact]
    public async Task StopAsync_ChildStillRunning_IsCancelledAndAwaitedBeforeTheWorkerStops()
    {
        var logs = new TestLoggerProvider();
        var childStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var childFinishedCleanup = false;
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                Priority.Start(async childToken =>
                {
                    childStarted.SetResult();
                    try
                    {
                        await Priority.Delay(Timeout.InfiniteTimeSpan, childToken);
                    }
                    catch (OperationCanceledException)
                    {
                        await Priority.Yield(); // cleanup that needs the loop, after the stop began
                        childFinishedCleanup = true;
                        throw;
                    }
                });
                await Task.Delay(Timeout.Infinite, token);
            });

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        await childStarted.Task.Within("the child");

        await host.StopAsync().Within("host stop");

        childFinishedCleanup.Should().BeTrue("the worker stopped only after its child ended");
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Completed);
        worker.ExecuteTask!.IsCanceled.Should().BeTrue("a cancelled child is not a fault");
    }

    [Fact]
    public async Task ChildFaults_ExecuteTaskFaultsWithItsException()
    {
        var logs = new TestLoggerProvider();
        var failure = new InvalidOperationException("keeper failed");
        using IHost host = TestHost.Build(
            logs,
            (worker, token) =>
            {
                Priority.Start(async _ =>
                {
                    await Priority.Yield();
                    throw failure;
                });
                return Task.CompletedTask; // ExecuteAsync ends; the worker waits for its child
            });

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        Func<Task> executing = () => worker.ExecuteTask!.Within("the worker");
        (await executing.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(failure);
        Func<Task> stop = () => host.StopAsync().Within("host stop");
        (await stop.Should().ThrowAsync<InvalidOperationException>("the host rethrows a BackgroundService's fault under StopHost"))
            .Which.Should().BeSameAs(failure);
    }
}
