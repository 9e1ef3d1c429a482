using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Contracts;

/// <summary>
/// The structured-concurrency contract both schedulers keep through <see cref="TaskScope"/>, written once and run on a loop and on pools
/// of one and three threads: the root scope holds the scheduler open for its children, a child's failure cancels the others and
/// surfaces in <see cref="PriorityScheduler.Completion"/>, a fault of the scheduler cancels the root scope's children, and a scope opened
/// with <see cref="TaskScope.RunAsync(Func{TaskScope, Task}, CancellationToken)"/> on either scheduler owns its children.
/// </summary>
public abstract class ScopeContractTests : IAsyncLifetime
{
    private SchedulerHost _host = null!;

    protected abstract int Threads { get; }

    private PriorityScheduler Scheduler => _host.Scheduler;

    public Task InitializeAsync()
    {
        _host = SchedulerHost.Create(Threads, levels: 3, $"scope-contract-{Threads}");
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        try
        {
            await _host.DisposeOrFailAsync();
        }
        catch (Exception) when (Scheduler.Completion.IsFaulted)
        {
            // The tests that fault the scheduler assert its outcome themselves.
        }
    }

    [Fact]
    public async Task RootScope_Child_HoldsTheSchedulerOpenUntilItEnds()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await Scheduler.InvokeAsync(() =>
        {
            Start(async _ =>
            {
                started.SetResult();
                await release.Task;
            });
            return Task.CompletedTask;
        }).WithTimeout("starting the child");
        await started.Task.WithTimeout("the child to start");

        _host.Complete();
        Scheduler.Scope.RunningCount.Should().Be(1);
        Scheduler.Completion.IsCompleted.Should().BeFalse("a root child is running");
        release.SetResult();
        await Scheduler.Completion.WithTimeout("the scheduler to end after its child");
        Scheduler.Scope.IsCompleted.Should().BeTrue();
    }

    [Fact]
    public async Task RootScope_ChildFailure_CancelsTheOthers_AndCompletionFaultsWithIt()
    {
        var sibling = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await Scheduler.InvokeAsync(() =>
        {
            Start(async token =>
            {
                try
                {
                    await Delay(Timeout.InfiniteTimeSpan, token);
                }
                catch (OperationCanceledException)
                {
                    sibling.SetResult();
                }
            });
            Start(_ => throw new InvalidOperationException("child failed"));
            return Task.CompletedTask;
        }).WithTimeout("starting the children");

        await sibling.Task.WithTimeout("the sibling to be cancelled by the failure");
        _host.Complete();
        Func<Task> completion = () => Scheduler.Completion.WithTimeout("the scheduler to end");
        await completion.Should().ThrowAsync<InvalidOperationException>().WithMessage("child failed");
        Scheduler.State.Should().Be(PrioritySchedulerState.Completed, "a child's failure is the scope's, not a fault of the scheduler");
    }

    [Fact]
    public async Task Fault_CancelsTheRootScopesChildren_AndCompletionFaultsWithTheFault()
    {
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await Scheduler.InvokeAsync(() =>
        {
            Start(async token =>
            {
                using CancellationTokenRegistration registration = token.Register(() => cancelled.TrySetResult());
                await Task.Delay(Timeout.Infinite, token).ConfigureAwait(false); // ends on the thread pool once cancelled
            });
            return Task.CompletedTask;
        }).WithTimeout("starting the child");

        Scheduler.GetSynchronizationContext(1).Post(_ => throw new InvalidOperationException("the fault"), null);
        await cancelled.Task.WithTimeout("the fault to cancel the root child");
        Func<Task> completion = () => Scheduler.Completion.WithTimeout("the faulted scheduler to end");
        await completion.Should().ThrowAsync<InvalidOperationException>().WithMessage("the fault");
        Scheduler.State.Should().Be(PrioritySchedulerState.Faulted);
    }

    [Fact]
    public async Task RunAsync_OnTheScheduler_OwnsItsChildren_AndRethrowsTheFirstFailureOnceTheyEnded()
    {
        var siblingEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task scope = await Scheduler.InvokeAsync(() => Task.FromResult(TaskScope.RunAsync(scope =>
        {
            scope.Scheduler.Should().BeSameAs(Scheduler);
            scope.Start(async token =>
            {
                _host.OwnsCurrentThread().Should().BeTrue("a child runs on the scope's scheduler");
                try
                {
                    await Delay(Timeout.InfiniteTimeSpan, token);
                }
                catch (OperationCanceledException)
                {
                    siblingEnded.SetResult();
                }
            });
            scope.Start(_ => throw new FormatException("first failure"), level: 2);
            return Task.CompletedTask;
        }))).WithTimeout("opening the scope");

        Func<Task> awaitScope = () => scope.WithTimeout("the scope to complete");
        await awaitScope.Should().ThrowAsync<FormatException>().WithMessage("first failure");
        siblingEnded.Task.IsCompleted.Should().BeTrue("the scope completes only once every child has ended");
    }

    [Fact]
    public async Task Start_OffTheSchedulersThreads_ThrowsAndStartsNothing()
    {
        Action start = () => Scheduler.Scope.Start(_ => Task.CompletedTask, 0);
        start.Should().Throw<InvalidOperationException>().WithMessage($"*does not run the {Scheduler.Kind} 'scope-contract-{Threads}'*InvokeAsync*");
        Scheduler.Scope.RunningCount.Should().Be(0);
        await Task.CompletedTask;
    }
}

public sealed class ScopeContract_Loop : ScopeContractTests
{
    protected override int Threads => 0;
}

public sealed class ScopeContract_Pool1 : ScopeContractTests
{
    protected override int Threads => 1;
}

public sealed class ScopeContract_Pool3 : ScopeContractTests
{
    protected override int Threads => 3;
}
