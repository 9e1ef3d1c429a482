using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Escalation;

/// <summary>
/// The inline decision of <c>await Prioritize</c> in and around raised work ([A-INLINE], [X-FLOW]): code in a flow decides at the flow's
/// effective level, read when it awaits (so at the raised level while raised, and at its own again once the raise ends); code outside
/// any flow decides at the level it asks for, whatever other flows are raised. On a loop and on a pool of one thread, where the order
/// of the log is the order of the decisions: code that goes on inline logs before the items queued at its effective level; code that
/// queues logs after them.
/// </summary>
public abstract class RaisedPrioritizeTests : IAsyncLifetime
{
    private const int Levels = 5;

    private SchedulerHost _host = null!;

    protected abstract int Threads { get; }

    private PriorityScheduler Scheduler => _host.Scheduler;

    public Task InitializeAsync()
    {
        _host = SchedulerHost.Create(Threads, Levels, $"raised-prioritize-{Threads}");
        return Task.CompletedTask;
    }

    public async Task DisposeAsync() => await _host.DisposeOrFailAsync();

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task RaisedWork_PrioritizeBelowItsFloor_GoesOnInline_WhenNothingAboveTheFloorWaits(bool throughTheScheduler)
    {
        // Raised from 0 to 3; an item waits at 3 (not above the floor) and one at 2 (above the level asked for). Deciding at level 1
        // would queue behind both; at the effective level (3) nothing waits above, so the work goes on at once.
        var log = new Log();
        await RunAsync(3, async () =>
        {
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    Post(log, 3, "x3");
                    Post(log, 2, "m2");
                    await (throughTheScheduler ? Scheduler.Prioritize(1) : Prioritize(1));
                    log.Add($"p{CurrentLevel}");
                },
                level: 0);
            await work;
            log.Add("waiter");
        });

        log.Entries.Should().Equal("p1", "x3", "waiter", "m2");
    }

    [Fact]
    public async Task RaisedWork_PrioritizeBelowItsFloor_QueuesBehindWorkAboveTheFloor()
    {
        // Raised from 0 to 3; an item waits at 4, above the floor: the work queues behind it, and still runs before the item at 2.
        var log = new Log();
        await RunAsync(3, async () =>
        {
            await Scheduler.InvokeAsync(
                async () =>
                {
                    Post(log, 2, "m2");
                    Post(log, 4, "u4");
                    await Prioritize(1);
                    log.Add($"p{CurrentLevel}");
                },
                level: 0);
            log.Add("waiter");
        });

        log.Entries.Should().Equal("u4", "p1", "waiter", "m2");
    }

    [Fact]
    public async Task WorkWhoseRaiseEnded_PrioritizeInItsFlow_DecidesAtItsOwnLevelAgain()
    {
        // Code the work left running in its flow goes on after the work's task completed, so after the raise to 3 ended: its Prioritize
        // to 0 must queue behind the item at 1, as it would have had the work never been raised.
        var log = new Log();
        var gate = new TaskCompletionSource();
        await RunAsync(3, async () =>
        {
            await Scheduler.InvokeAsync(
                () =>
                {
#pragma warning disable PA0003 // on purpose: code of the flow that outlives the work's task
                    _ = StragglerAsync(log, gate.Task);
#pragma warning restore PA0003
                    return Task.CompletedTask;
                },
                level: 2);
            Post(log, 1, "m1");
            gate.SetResult(); // the straggler's continuation goes through its flow, at the flow's own level (2) now
            log.Add("waiter");
        });

        log.Entries.Should().Equal("waiter", "s2", "m1", "s0");

        static async Task StragglerAsync(Log log, Task gate)
        {
            await gate;
            log.Add($"s{CurrentLevel}");
            await Prioritize(0);
            log.Add($"s{CurrentLevel}");
        }
    }

    [Fact]
    public async Task CodeOutsideAnyFlow_WhileAFlowIsRaised_DecidesAtTheLevelItAsksFor()
    {
        // A flow waits (raised to 4) on work held by a gate; level code at 3 moves between levels meanwhile: each decision is its own.
        var log = new Log();
        var gate = new TaskCompletionSource();
        await RunAsync(3, async () =>
        {
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    await gate.Task;
                    log.Add("w");
                },
                level: 0);
            PriorityTask waiter = Scheduler.InvokeAsync(
                async () =>
                {
                    await work;
                    log.Add("waiter");
                },
                level: 4);
            await Scheduler.Yield(3); // the waiter runs (level 4) and raises the work, which waits on the gate
            Post(log, 2, "m2");
            await Prioritize(1); // m2 waits above level 1: queued behind it
            log.Add($"p{CurrentLevel}");
            Post(log, 1, "m1");
            await Prioritize(3); // nothing waits above level 3 (the raised work waits on its gate): at once
            log.Add($"p{CurrentLevel}");
            gate.SetResult(); // the work goes on at 4, its waiter's level
            log.Add("gate");
            await waiter;
        });

        log.Entries.Should().Equal("m2", "p1", "p3", "gate", "w", "waiter", "m1");
    }

    /// <summary>Runs <paramref name="body"/> at <paramref name="level"/> as level code (a task of the level's factory, in no flow), then
    /// waits until every item it queued has run.</summary>
    private async Task RunAsync(int level, Func<Task> body)
    {
        await _host.RunOn(level, async () =>
        {
            await body();
            return true;
        }).WithTimeout("the test's body");
        _host.Drain();
    }

    private void Post(Log log, int level, string name) => Scheduler.GetSynchronizationContext(level).Post(_ => log.Add(name), null);

    private sealed class Log
    {
        private readonly ConcurrentQueue<string> _entries = new();

        public List<string> Entries => [.. _entries];

        public void Add(string entry) => _entries.Enqueue(entry);
    }
}

public sealed class RaisedPrioritize_Loop : RaisedPrioritizeTests
{
    protected override int Threads => 0;
}

public sealed class RaisedPrioritize_Pool1 : RaisedPrioritizeTests
{
    protected override int Threads => 1;
}
