using System.Reflection;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Migration;

/// <summary>
/// The public types the two schedulers used to have twice, and the members renamed when they became one: each test checks that the
/// old name is gone and that what replaces it does what the old one did (docs/design.md, "The one-engine change").
/// </summary>
public sealed class OneEngineApiTests
{
    private static readonly Assembly Library = typeof(PriorityScheduler).Assembly;

    [Theory]
    [InlineData("PriorityAsync.IPriorityScheduler", typeof(PriorityScheduler))]
    [InlineData("PriorityAsync.PriorityContextState", typeof(PrioritySchedulerState))]
    [InlineData("PriorityAsync.PriorityContextSnapshot", typeof(PrioritySchedulerSnapshot))]
    [InlineData("PriorityAsync.PriorityThreadPoolSynchronizationContext", typeof(PrioritySynchronizationContext))]
    [InlineData("PriorityAsync.PriorityThreadPoolTaskScheduler", typeof(PriorityTaskScheduler))]
    public void RemovedType_IsGone_AndItsReplacementIsPublic(string removed, Type replacement)
    {
        Library.GetType(removed).Should().BeNull();
        replacement.IsPublic.Should().BeTrue();
    }

    [Fact]
    public async Task IPriorityScheduler_ReplacedBy_PriorityScheduler_TheBaseOfBothSchedulers()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Name = "one-engine pool" });
        await using var disposePool = pool.BoundedDisposal();
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "one-engine loop" });
        await using var disposeLoop = loop.BoundedDisposal();

        foreach (PriorityScheduler scheduler in new PriorityScheduler[] { pool, loop.Context })
        {
            int level = await scheduler.InvokeAsync(() => Task.FromResult(Priority.CurrentLevel), 2).WithTimeout("InvokeAsync");
            level.Should().Be(2);
            scheduler.GetSnapshot().State.Should().Be(PrioritySchedulerState.Running);
        }
    }

    [Fact]
    public void PoolSynchronizationContextAndTaskScheduler_ReplacedBy_TheSharedTypes_WithSchedulerForPool()
    {
        using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        PrioritySynchronizationContext context = pool.GetSynchronizationContext(1);
        context.Scheduler.Should().BeSameAs(pool);
        context.Level.Should().Be(1);
        PriorityTaskScheduler scheduler = pool.GetScheduler(1);
        scheduler.Scheduler.Should().BeSameAs(pool);
        scheduler.Level.Should().Be(1);
        typeof(PrioritySynchronizationContext).GetProperty("Pool").Should().BeNull();
    }

    [Fact]
    public void ContextProperty_ReplacedBy_Scheduler_OnTheSynchronizationContext_TheTaskScheduler_AndTaskScope()
    {
        typeof(PrioritySynchronizationContext).GetProperty("Context").Should().BeNull();
        typeof(PriorityTaskScheduler).GetProperty("Context").Should().BeNull();
        typeof(TaskScope).GetProperty("Context").Should().BeNull();

        var loop = new PriorityContextThread();
        loop.Context.GetSynchronizationContext(0).Scheduler.Should().BeSameAs(loop.Context);
        loop.Context.GetScheduler(0).Scheduler.Should().BeSameAs(loop.Context);
        loop.Context.Scope.Scheduler.Should().BeSameAs(loop.Context);
        loop.DisposeOrFail();
    }

    [Fact]
    public async Task CancelRootChildren_ReplacedBy_ScopeCancel()
    {
        typeof(PriorityThreadPool).GetMethod("CancelRootChildren").Should().BeNull();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await using var disposePool = pool.BoundedDisposal();
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await pool.InvokeAsync(() =>
        {
            Priority.Start(token =>
            {
                token.Register(() => cancelled.SetResult());
                return cancelled.Task;
            });
            return Task.CompletedTask;
        }).WithTimeout("starting the root child");

        pool.Scope.Cancel();
        await cancelled.Task.WithTimeout("the root child to be cancelled");
    }

    [Fact]
    public void SharedOptions_LiveOnce_InPrioritySchedulerOptions()
    {
        typeof(PriorityContextOptions).BaseType.Should().Be<PrioritySchedulerOptions>();
        typeof(PriorityThreadPoolOptions).BaseType.Should().Be<PrioritySchedulerOptions>();
        foreach (string shared in new[] { "Levels", "DefaultLevel", "Name", "IdleSpinCount", "StallTimeout", "TimeSlice", "Policy", "TimeProvider" })
        {
            typeof(PrioritySchedulerOptions).GetProperty(shared)!.DeclaringType.Should().Be<PrioritySchedulerOptions>(shared);
        }

        PriorityContextOptions.MaxLevels.Should().Be(PrioritySchedulerOptions.MaxLevels, "the constants are still reachable through the derived names");
    }

    [Fact]
    public void Validate_ListsEveryBadSetting_WithoutCreatingAScheduler()
    {
        var options = new PriorityThreadPoolOptions { Levels = 0, IdleSpinCount = -1, ThreadCount = 0 };
        options.Validate().Should().Equal(
            "Levels is 0; it must be between 1 and 64.",
            "IdleSpinCount is -1; it must be between 0 and 10000.",
            "ThreadCount is 0; it must be between 1 and 256.");
        new PriorityContextOptions().Validate().Should().BeEmpty();
    }

    [Fact]
    public async Task Completion_OfAContext_CompletesWhenItsLoopEnds()
    {
        PriorityContext? context = null;
        PriorityContext.Run(() => context = PriorityContext.Current);
        await context!.Completion.WithTimeout("the context's Completion after Run returned");
        context.State.Should().Be(PrioritySchedulerState.Completed);
    }

    [Fact]
    public void Messages_NameAnUnnamedSchedulerByItsKind_ANamedOneByKindAndName()
    {
        var unnamed = new PriorityContextThread();
        Action badLevel = () => unnamed.Context.Prioritize(7);
        badLevel.Should().Throw<ArgumentOutOfRangeException>()
            .Which.Message.Should().Contain("for the PriorityContext (3 levels").And.NotContain("'PriorityContext'");
        unnamed.DisposeOrFail();

        using var named = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Name = "workers" });
        Action badPoolLevel = () => named.Yield(-1);
        badPoolLevel.Should().Throw<ArgumentOutOfRangeException>().Which.Message.Should().Contain("for the PriorityThreadPool 'workers' (3 levels");
    }
}
