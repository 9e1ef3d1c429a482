using PriorityAsync.Tests.HostDriven;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Faults;

/// <summary>
/// An end that drops queued work (a host's <see cref="PriorityContextDriver.Dispose"/>, a fault) while work the library handed out a
/// task for has started and waits for a continuation it queued through the level's <see cref="SynchronizationContext"/> (a plain
/// <c>await Task.Yield()</c>): the continuation is dropped, and the task (InvokeAsync, a controller's Run, a scope's child) must still
/// complete, faulted with <see cref="ObjectDisposedException"/>, by the time the end returns. Before the fix each of these tasks stayed
/// <see cref="TaskStatus.WaitingForActivation"/> for ever.
/// </summary>
public sealed class PendingWorkAtEndTests
{
    [Fact]
    public void HostDispose_FromAnItem_WhileInvokeAsyncWorkWaitsOnTaskYield_FaultsItsTaskBeforeTheDrainReturns()
    {
        Task? invoked = null;
        bool resumed = false;
        HostThread.Run(host =>
        {
            invoked = host.Context.InvokeAsync(
                async () =>
                {
                    await Task.Yield(); // queued at the back of level 1, behind the item below
                    resumed = true;
                },
                1);
            host.Post(1, host.Driver.Dispose); // an end requested from an item: the drain stops before the next item and ends

            host.Driver.Drain();

            host.Context.State.Should().Be(PrioritySchedulerState.Completed);
        });

        AssertAbandoned(invoked!, "InvokeAsync");
        resumed.Should().BeFalse("the continuation was dropped: the rest of the work never ran");
    }

    [Fact]
    public void HostDispose_FromAnotherThreadBetweenDrains_WhileInvokeAsyncWorkWaitsOnTaskYield_FaultsItsTask()
    {
        Task? invoked = null;
        int dropped = 0;
        HostThread.Run(host =>
        {
            host.Context.WorkDropped += (_, _) => dropped++;
            invoked = host.Context.InvokeAsync(async () =>
            {
                host.Clock.Advance(HostThread.Ms(10)); // spends the drain's budget: the continuation stays queued
                await Task.Yield();
            });

            host.Driver.Drain(HostThread.Ms(5)).WorkRemains.Should().BeTrue("the continuation is queued");
            TestTimeout.OnOwnThread(host.Driver.Dispose, "Dispose from another thread"); // requests the end; the next drain ends it
            host.Driver.Drain();

            host.Context.State.Should().Be(PrioritySchedulerState.Completed);
        });

        AssertAbandoned(invoked!, "InvokeAsync");
        dropped.Should().Be(1, "the dropped continuation is reported");
    }

    [Fact]
    public void LoopFault_WhileInvokeAsyncControllerScopeChildAndScopeBodyWaitOnTaskYield_FaultsTheirTasksBeforeRunReturns()
    {
        var boom = new InvalidOperationException("boom");
        Task? invoked = null;
        Task? controllerRun = null;
        Task? child = null;
        Task? scoped = null;
        var thrown = FluentActions.Invoking(() => TestTimeout.OnOwnThread(
            () => PriorityContext.Run(() =>
            {
                PriorityContext context = PriorityContext.Current!;
                invoked = context.InvokeAsync(async () => await Task.Yield());
                controllerRun = context.CreateController(0).Run(async () => await Task.Yield());
                child = context.Scope.StartAsync(async _ => await Task.Yield(), 0);
                context.GetSynchronizationContext(0).Post(_ => scoped = TaskScope.RunAsync(async _ => await Task.Yield()), null);

                // Behind the three items above, and ahead of the continuations they queue.
                context.GetSynchronizationContext(0).Post(_ => throw boom, null);
            }),
            "PriorityContext.Run")).Should().Throw<InvalidOperationException>();
        thrown.Which.Should().BeSameAs(boom);

        AssertAbandoned(invoked!, "InvokeAsync");
        AssertAbandoned(controllerRun!, "PriorityTaskController.Run");
        AssertAbandoned(child!, "TaskScope.Start");
        AssertAbandoned(scoped!, "TaskScope");
    }

    [Fact]
    public async Task PoolFault_WhileInvokeAsyncWorkWaitsOnTaskYield_FaultsItsTask()
    {
        var boom = new InvalidOperationException("boom");
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Name = "pending-at-fault" });
        using var gate = new ManualResetEventSlim(false);
        pool.GetSynchronizationContext(0).Post(_ => gate.WaitOrFail("the gate"), null); // holds the one thread while we queue
        Task invoked = pool.InvokeAsync(async () => await Task.Yield(), 0);
        pool.GetSynchronizationContext(0).Post(_ => throw boom, null);
        gate.Set();

        Func<Task> disposal = () => pool.DisposeOrFailAsync();
        (await disposal.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(boom);

        AssertAbandoned(invoked, "InvokeAsync");
    }

    /// <summary>The task was completed by the end itself (not later): faulted with <see cref="ObjectDisposedException"/>, naming the
    /// kind of work.</summary>
    private static void AssertAbandoned(Task task, string kind)
    {
        task.Status.Should().Be(TaskStatus.Faulted, $"the {kind} task must be completed by the end, not left waiting for a dropped continuation");
        task.Exception!.InnerException.Should().BeOfType<ObjectDisposedException>()
            .Which.Message.Should().Contain(kind);
    }
}
