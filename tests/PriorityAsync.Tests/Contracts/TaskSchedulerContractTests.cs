using System.Reflection;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Contracts;

/// <summary>The contract every level's <see cref="PriorityTaskScheduler"/> keeps (rule 7), run against every level of a few context shapes.</summary>
public abstract class TaskSchedulerContractTests : IAsyncLifetime
{
    private PriorityContextThread _loop = null!;

    protected abstract int Levels { get; }

    protected abstract int Level { get; }

    protected PriorityContext Context => _loop.Context;

    protected PriorityTaskScheduler Sut => Context.GetScheduler(Level);

    public Task InitializeAsync()
    {
        _loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        return Task.CompletedTask;
    }

    public async Task DisposeAsync() => await _loop.DisposeAsync().AsTask().WithTimeout("the loop to finish");

    [Fact]
    public void Identity_IsCachedPerLevel_WithConcurrencyOne()
    {
        Sut.Should().BeSameAs(Context.GetScheduler(Level));
        Sut.Level.Should().Be(Level);
        Sut.MaximumConcurrencyLevel.Should().Be(1);
        Context.GetTaskFactory(Level).Scheduler.Should().BeSameAs(Sut);
        Context.GetTaskFactory(Level).Should().BeSameAs(Context.GetTaskFactory(Level));
    }

    [Fact]
    public async Task StartNew_RunsOnLoopThreadAtThisLevel_WithTheSchedulerHidden()
    {
        // The factory hides its scheduler (as AsyncEx's and Task.Run do): nested StartNew/ContinueWith without a scheduler go to the
        // pool. The level is carried by the SynchronizationContext instead (see StartNew_AsyncBody_ResumesAtThisLevelAfterIo).
        var (thread, level, scheduler) = await Context.GetTaskFactory(Level)
            .StartNew(() => (Environment.CurrentManagedThreadId, PriorityContext.CurrentLevel, TaskScheduler.Current))
            .WithTimeout("the task");
        thread.Should().Be(_loop.ManagedThreadId);
        level.Should().Be(Level);
        scheduler.Should().BeSameAs(TaskScheduler.Default);
    }

    [Fact]
    public async Task StartNew_AsyncBody_ResumesAtThisLevelAfterIo()
    {
        int level = await Context.GetTaskFactory(Level).StartNew(async () =>
        {
#pragma warning disable PA0001 // stands for I/O that completes on the thread pool: the contract is about resuming after it
            await Task.Delay(1);
#pragma warning restore PA0001
            return PriorityContext.CurrentLevel;
        }).Unwrap().WithTimeout("the task");
        level.Should().Be(Level);
    }

    [Fact]
    public async Task Tasks_AreFifoWithinTheLevel_AndFollowStrictPriorityAcrossLevels()
    {
        var ran = new List<string>();
        var tasks = new List<Task>();
        using (Context.PauseLoop())
        {
            for (int i = 0; i < 10; i++)
            {
                int n = i;
                tasks.Add(Context.GetTaskFactory(Level).StartNew(() => ran.Add($"task {n}")));
            }

            if (Level < Levels - 1)
            {
                Context.GetSynchronizationContext(Levels - 1).Post(_ => ran.Add("urgent"), null);
            }
        }

        await Task.WhenAll(tasks).WithTimeout("the tasks");
        Context.Drain();
        var expected = Enumerable.Range(0, 10).Select(n => $"task {n}").ToList();
        if (Level < Levels - 1)
        {
            expected.Insert(0, "urgent");
        }

        ran.Should().Equal(expected);
    }

    [Fact]
    public async Task Exception_StaysInTheTask_AndDoesNotFaultTheLoop()
    {
        Task failing = Context.GetTaskFactory(Level).StartNew(() => throw new InvalidOperationException("in task"));
        await FluentActions.Awaiting(() => failing.WithTimeout("the failing task")).Should().ThrowAsync<InvalidOperationException>();
        Context.State.Should().Be(PriorityContextState.Running);
        Context.Drain();
    }

    [Fact]
    public async Task GetScheduledTasks_ListsQueuedTasksOldestFirst()
    {
        var method = typeof(TaskScheduler).GetMethod("GetScheduledTasks", BindingFlags.Instance | BindingFlags.NonPublic)!;
        var queued = new List<Task>();
        using (Context.PauseLoop())
        {
            for (int i = 0; i < 3; i++)
            {
                queued.Add(Context.GetTaskFactory(Level).StartNew(() => { }));
            }

            Context.GetSynchronizationContext(Level).Post(_ => { }, null); // not a task: not listed
            var listed = ((IEnumerable<Task>)method.Invoke(Sut, null)!).ToList();
            listed.Should().Equal(queued);
        }

        await Task.WhenAll(queued).WithTimeout("the tasks");
        ((IEnumerable<Task>)method.Invoke(Sut, null)!).Should().BeEmpty();
    }

    [Fact]
    public async Task Wait_OnLoopThread_InlinesWhenNothingMoreUrgentIsQueued()
    {
        (bool completed, int ranOn) = await Context.RunOn(0, () =>
        {
            int thread = 0;
            Task queued = Context.GetTaskFactory(Level).StartNew(() => thread = Environment.CurrentManagedThreadId);
            queued.Wait(); // only an infinite Wait tries to inline; inlined because nothing above this level is queued
            return Task.FromResult((queued.IsCompleted, thread));
        }).WithTimeout("the body");
        completed.Should().BeTrue();
        ranOn.Should().Be(_loop.ManagedThreadId);
    }

    [Fact]
    public async Task Wait_OnLoopThread_RefusesToInlineAheadOfMoreUrgentWork()
    {
        if (Level == Levels - 1)
        {
            return; // nothing is more urgent than the top level; the lower levels cover this rule
        }

        var inline = typeof(TaskScheduler).GetMethod("TryExecuteTaskInline", BindingFlags.Instance | BindingFlags.NonPublic)!;
        var ran = new List<string>();
        Task queued = null!;
        bool inlined = await Context.RunOn(0, () =>
        {
            Context.GetSynchronizationContext(Levels - 1).Post(_ => ran.Add("urgent"), null);
            queued = Context.GetTaskFactory(Level).StartNew(() => ran.Add("task"));

            // What Task.Wait() / RunSynchronously ask the scheduler on the loop thread (a refused inline would then block,
            // the sync-over-async hazard; calling the override directly keeps the test from deadlocking).
            return Task.FromResult((bool)inline.Invoke(Sut, [queued, true])!);
        }).WithTimeout("the body");

        inlined.Should().BeFalse("inlining would let the task overtake the urgent item");
        await queued.WithTimeout("the task, run from the queue");
        ran.Should().Equal("urgent", "task");
    }

    [Fact]
    public async Task CancelledBeforeRunning_NeverRuns()
    {
        using var cts = new CancellationTokenSource();
        bool ran = false;
        Task task;
        using (Context.PauseLoop())
        {
            task = Context.GetTaskFactory(Level).StartNew(() => ran = true, cts.Token);
            cts.Cancel();
        }

        await FluentActions.Awaiting(() => task.WithTimeout("the cancelled task")).Should().ThrowAsync<OperationCanceledException>();
        Context.Drain();
        ran.Should().BeFalse();
        task.IsCanceled.Should().BeTrue();
    }
}

public sealed class TaskSchedulerContract_Levels1_Level0 : TaskSchedulerContractTests
{
    protected override int Levels => 1;

    protected override int Level => 0;
}

public sealed class TaskSchedulerContract_Levels3_Level0 : TaskSchedulerContractTests
{
    protected override int Levels => 3;

    protected override int Level => 0;
}

public sealed class TaskSchedulerContract_Levels3_Level1 : TaskSchedulerContractTests
{
    protected override int Levels => 3;

    protected override int Level => 1;
}

public sealed class TaskSchedulerContract_Levels3_Level2 : TaskSchedulerContractTests
{
    protected override int Levels => 3;

    protected override int Level => 2;
}

public sealed class TaskSchedulerContract_Levels64_Level63 : TaskSchedulerContractTests
{
    protected override int Levels => 64;

    protected override int Level => 63;
}
