using System.Collections.Concurrent;
using System.Reflection;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Contracts;

/// <summary>The contract every level's <see cref="TaskScheduler"/> keeps (rule 7), run against every level of a few shapes of each
/// scheduler (<see cref="Threads"/> 0: a <see cref="PriorityContext"/>'s <see cref="PriorityTaskScheduler"/>; N: a
/// <see cref="PriorityThreadPool"/>'s <see cref="PriorityTaskScheduler"/> with N threads, in its lock-free mode or, with
/// <see cref="Caps"/> or another <see cref="Policy"/>, its locked mode). Run order is asserted only with one thread and the strict
/// policy; otherwise these tests assert exactly once.</summary>
public abstract class TaskSchedulerContractTests : IAsyncLifetime
{
    private SchedulerHost _host = null!;

    protected SchedulerHost Host => _host;

    protected virtual int Threads => 0;

    /// <summary>The pool's caps per level (<see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/>), or null.</summary>
    protected virtual IReadOnlyList<int>? Caps => null;

    /// <summary>The pool's policy, or null for strict: with caps, aging or weighted shares the pool dequeues under its lock.</summary>
    protected virtual PriorityPolicy? Policy => null;

    protected abstract int Levels { get; }

    protected abstract int Level { get; }

    protected PriorityScheduler Scheduler => _host.Scheduler;

    protected TaskScheduler Sut => Scheduler.GetScheduler(Level);

    internal int LevelCount => Levels;

    internal int LevelUnderTest => Level;

    public Task InitializeAsync()
    {
        _host = SchedulerHost.Create(Threads, Levels, $"scheduler-contract-{Threads}-{Levels}-{Level}", Caps, Policy);
        return Task.CompletedTask;
    }

    public Task DisposeAsync() => _host.DisposeOrFailAsync();

    [Fact]
    public void Identity_IsCachedPerLevel_WithTheLevelsConcurrency()
    {
        Sut.Should().BeSameAs(Scheduler.GetScheduler(Level));
        (Sut is PriorityTaskScheduler loop ? loop.Level : ((PriorityTaskScheduler)Sut).Level).Should().Be(Level);
        Sut.MaximumConcurrencyLevel.Should().Be(_host.MaxConcurrency(Level), "1 on the loop; on a pool, the level's cap (the thread count without one)");
        Scheduler.GetTaskFactory(Level).Scheduler.Should().BeSameAs(Sut);
        Scheduler.GetTaskFactory(Level).Should().BeSameAs(Scheduler.GetTaskFactory(Level));
    }

    [Fact]
    public async Task StartNew_RunsOnLoopThreadAtThisLevel_WithTheSchedulerHidden()
    {
        // The factory hides its scheduler (as AsyncEx's and Task.Run do): nested StartNew/ContinueWith without a scheduler go to the
        // pool. The level is carried by the SynchronizationContext instead (see StartNew_AsyncBody_ResumesAtThisLevelAfterIo).
        var (owned, level, scheduler) = await Scheduler.GetTaskFactory(Level)
            .StartNew(() => (_host.OwnsCurrentThread(), Priority.CurrentLevel, TaskScheduler.Current))
            .WithTimeout("the task");
        owned.Should().BeTrue();
        level.Should().Be(Level);
        scheduler.Should().BeSameAs(TaskScheduler.Default);
    }

    [Fact]
    public async Task StartNew_AsyncBody_ResumesAtThisLevelAfterIo()
    {
        int level = await Scheduler.GetTaskFactory(Level).StartNew(async () =>
        {
#pragma warning disable PA0001 // stands for I/O that completes on the thread pool: the contract is about resuming after it
            await Task.Delay(1);
#pragma warning restore PA0001
            return Priority.CurrentLevel;
        }).Unwrap().WithTimeout("the task");
        level.Should().Be(Level);
    }

    [Fact]
    public async Task Tasks_AreFifoWithinTheLevel_AndFollowStrictPriorityAcrossLevels()
    {
        var ran = new ConcurrentQueue<string>();
        var tasks = new List<Task>();
        using (_host.Pause())
        {
            for (int i = 0; i < 10; i++)
            {
                int n = i;
                tasks.Add(Scheduler.GetTaskFactory(Level).StartNew(() => ran.Enqueue($"task {n}")));
            }

            if (Level < Levels - 1)
            {
                Scheduler.GetSynchronizationContext(Levels - 1).Post(_ => ran.Enqueue("urgent"), null);
            }
        }

        await Task.WhenAll(tasks).WithTimeout("the tasks");
        _host.Drain();
        var expected = Enumerable.Range(0, 10).Select(n => $"task {n}").ToList();
        if (Level < Levels - 1)
        {
            expected.Insert(0, "urgent");
        }

        if (_host.RunOrderIsStrictOrder)
        {
            ran.Should().Equal(expected);
        }
        else
        {
            ran.Should().BeEquivalentTo(expected, "exactly once; with several threads, run order is not dequeue order");
        }
    }

    [Fact]
    public async Task Exception_StaysInTheTask_AndDoesNotFaultTheLoop()
    {
        Task failing = Scheduler.GetTaskFactory(Level).StartNew(() => throw new InvalidOperationException("in task"));
        await FluentActions.Awaiting(() => failing.WithTimeout("the failing task")).Should().ThrowAsync<InvalidOperationException>();
        Scheduler.State.Should().Be(PrioritySchedulerState.Running);
        _host.Drain();
    }

    [Fact]
    public async Task GetScheduledTasks_ListsQueuedTasksOldestFirst()
    {
        var method = typeof(TaskScheduler).GetMethod("GetScheduledTasks", BindingFlags.Instance | BindingFlags.NonPublic)!;
        var queued = new List<Task>();
        using (_host.Pause())
        {
            for (int i = 0; i < 3; i++)
            {
                queued.Add(Scheduler.GetTaskFactory(Level).StartNew(() => { }));
            }

            Scheduler.GetSynchronizationContext(Level).Post(_ => { }, null); // not a task: not listed
            var listed = ((IEnumerable<Task>)method.Invoke(Sut, null)!).ToList();
            listed.Should().Equal(queued);
        }

        await Task.WhenAll(queued).WithTimeout("the tasks");
        ((IEnumerable<Task>)method.Invoke(Sut, null)!).Should().BeEmpty();
    }

    [Fact]
    public async Task Wait_OnLoopThread_InlinesWhenNothingMoreUrgentIsQueued()
    {
        (bool completed, bool owned) = await _host.RunOn(0, () =>
        {
            bool ownedThread = false;
            Task queued = Scheduler.GetTaskFactory(Level).StartNew(() => ownedThread = _host.OwnsCurrentThread());
            queued.Wait(); // only an infinite Wait tries to inline (on one thread, inlined because nothing above this level is queued)
            return Task.FromResult((queued.IsCompleted, ownedThread));
        }).WithTimeout("the body");
        completed.Should().BeTrue();
        owned.Should().BeTrue();
    }

    [Fact]
    public async Task CancelledBeforeRunning_NeverRuns()
    {
        using var cts = new CancellationTokenSource();
        bool ran = false;
        Task task;
        using (_host.Pause())
        {
            task = Scheduler.GetTaskFactory(Level).StartNew(() => ran = true, cts.Token);
            cts.Cancel();
        }

        await FluentActions.Awaiting(() => task.WithTimeout("the cancelled task")).Should().ThrowAsync<OperationCanceledException>();
        _host.Drain();
        ran.Should().BeFalse();
        task.IsCanceled.Should().BeTrue();
    }

    /// <summary>Blocks all of a pool's threads but one inside items at the top level, so that an item queued above stays queued while
    /// the remaining thread runs the test's body.</summary>
    protected LoopHarness.Pause PauseAllButOne()
    {
        var pause = new LoopHarness.Pause();
        using var entered = new CountdownEvent(_host.Concurrency - 1);
        for (int i = 0; i < _host.Concurrency - 1; i++)
        {
            Scheduler.GetSynchronizationContext(Levels - 1).Post(_ =>
            {
                entered.Signal();
                pause.Hold();
            }, null);
        }

        entered.Wait(TestTimeout.Unexpected).Should().BeTrue("the other threads to enter the pause");
        return pause;
    }
}

/// <summary>The rules that need a more urgent level than the one under test: declared only for those shapes (a top level has nothing
/// above it to overtake, and a test there would pass without asserting anything).</summary>
public abstract class TaskSchedulerBelowTopContractTests : TaskSchedulerContractTests
{
    [Fact]
    public async Task Wait_OnLoopThread_RefusesToInlineAheadOfMoreUrgentWork()
    {
        Level.Should().BeLessThan(Levels - 1, "this rule is declared only for a level with a more urgent one above it");
        var inline = typeof(TaskScheduler).GetMethod("TryExecuteTaskInline", BindingFlags.Instance | BindingFlags.NonPublic)!;
        var ran = new ConcurrentQueue<string>();
        Task queued = null!;
        using LoopHarness.Pause? others = Host.Concurrency > 1 ? PauseAllButOne() : null; // the urgent item stays queued
        bool inlined = await Host.RunOn(0, () =>
        {
            Scheduler.GetSynchronizationContext(Levels - 1).Post(_ => ran.Enqueue("urgent"), null);
            queued = Scheduler.GetTaskFactory(Level).StartNew(() => ran.Enqueue("task"));

            // What Task.Wait() / RunSynchronously ask the scheduler on the loop thread (a refused inline would then block,
            // the sync-over-async hazard; calling the override directly keeps the test from deadlocking).
            return Task.FromResult((bool)inline.Invoke(Sut, [queued, true])!);
        }).WithTimeout("the body");

        inlined.Should().BeFalse("inlining would let the task overtake the urgent item");
        others?.Dispose();
        await queued.WithTimeout("the task, run from the queue");
        if (Host.RunOrderIsStrictOrder)
        {
            ran.Should().Equal("urgent", "task");
        }
        else
        {
            ran.Should().BeEquivalentTo(["urgent", "task"]);
        }
    }
}

/// <summary>Every shape below the top level runs the rules of <see cref="TaskSchedulerBelowTopContractTests"/>.</summary>
public sealed class TaskSchedulerContractShapesTests
{
    [Fact]
    public void EveryShapeBelowTheTopLevel_RunsTheRulesThatNeedAMoreUrgentLevel()
    {
        var shapes = typeof(TaskSchedulerContractTests).Assembly.GetTypes()
            .Where(t => !t.IsAbstract && t.IsSubclassOf(typeof(TaskSchedulerContractTests)))
            .Select(t => (Type: t, Instance: (TaskSchedulerContractTests)Activator.CreateInstance(t)!))
            .ToList();
        shapes.Should().Contain(s => s.Instance.LevelUnderTest == s.Instance.LevelCount - 1).And
            .Contain(s => s.Instance.LevelUnderTest < s.Instance.LevelCount - 1);
        foreach ((Type type, TaskSchedulerContractTests shape) in shapes)
        {
            bool belowTop = shape.LevelUnderTest < shape.LevelCount - 1;
            type.IsSubclassOf(typeof(TaskSchedulerBelowTopContractTests)).Should().Be(belowTop, type.Name);
        }
    }
}

public sealed class TaskSchedulerContract_Levels1_Level0 : TaskSchedulerContractTests
{
    protected override int Levels => 1;

    protected override int Level => 0;
}

public sealed class TaskSchedulerContract_Levels3_Level0 : TaskSchedulerBelowTopContractTests
{
    protected override int Levels => 3;

    protected override int Level => 0;
}

public sealed class TaskSchedulerContract_Levels3_Level1 : TaskSchedulerBelowTopContractTests
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

public sealed class TaskSchedulerContract_Pool1_Levels3_Level1 : TaskSchedulerBelowTopContractTests
{
    protected override int Threads => 1;

    protected override int Levels => 3;

    protected override int Level => 1;
}

public sealed class TaskSchedulerContract_Pool3_Levels1_Level0 : TaskSchedulerContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 1;

    protected override int Level => 0;
}

public sealed class TaskSchedulerContract_Pool3_Levels3_Level0 : TaskSchedulerBelowTopContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 0;
}

public sealed class TaskSchedulerContract_Pool2_Levels3_Level2 : TaskSchedulerContractTests
{
    protected override int Threads => 2;

    protected override int Levels => 3;

    protected override int Level => 2;
}

public sealed class TaskSchedulerContract_Pool4_Levels64_Level63 : TaskSchedulerContractTests
{
    protected override int Threads => 4;

    protected override int Levels => 64;

    protected override int Level => 63;
}

public sealed class TaskSchedulerContract_Pool3_Levels3_Capped313_Level1 : TaskSchedulerBelowTopContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 1;

    protected override IReadOnlyList<int>? Caps => [3, 1, 3];
}

public sealed class TaskSchedulerContract_Pool3_Levels3_Capped313_Level2 : TaskSchedulerContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 2;

    protected override IReadOnlyList<int>? Caps => [3, 1, 3];
}

public sealed class TaskSchedulerContract_Pool2_Levels3_Capped122_Level0 : TaskSchedulerBelowTopContractTests
{
    protected override int Threads => 2;

    protected override int Levels => 3;

    protected override int Level => 0;

    protected override IReadOnlyList<int>? Caps => [1, 2, 2];
}

public sealed class TaskSchedulerContract_Pool2_Levels3_Aging_Level1 : TaskSchedulerBelowTopContractTests
{
    protected override int Threads => 2;

    protected override int Levels => 3;

    protected override int Level => 1;

    protected override PriorityPolicy? Policy => PriorityPolicy.Aging(TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(5));
}

public sealed class TaskSchedulerContract_Pool1_Levels3_Shares_Level0 : TaskSchedulerBelowTopContractTests
{
    protected override int Threads => 1;

    protected override int Levels => 3;

    protected override int Level => 0;

    protected override PriorityPolicy? Policy => PriorityPolicy.WeightedShares(1, 2, 4);
}

public sealed class TaskSchedulerContract_Pool3_Levels3_Shares_Level2 : TaskSchedulerContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 2;

    protected override PriorityPolicy? Policy => PriorityPolicy.WeightedShares(1, 2, 4);
}
