using System.Globalization;
using Spectre.Console.Testing;

namespace PriorityAsync.Inspector.Tests;

/// <summary>
/// A worker that is stuck when the inspector is reached for: the thread's item is named, with its level and how long it has run, from
/// the target's own record of the running item, whether it started before the session or between two samples; and the warnings
/// say so. Every wait is gated on what the target or the inspector reports. The only claim about time: once the target's watchdog
/// reported a stall (500 ms in the target), the stalled item has run at least that long, and the inspector says at least that.
/// </summary>
public sealed class StuckWorkerTests
{
    private const double StallTimeoutMs = 500;

    [Fact]
    public async Task Attach_LoopStuckBeforeTheSession_NamesTheBlockingCallbackAndWarnsOfTheStall()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        await target.SendAsync("stall");
        await target.WaitForLineAsync("stalled worker"); // reported by the target's own watchdog, with no session attached

        var model = new InspectorModel { ProcessId = target.Id, ProcessName = "target" };
        Snapshot snapshot;
        await using (InspectorSession.Start(target.Id, model, new SessionOptions()))
        {
            snapshot = await AttachTests.WaitForAsync(
                model,
                s => s.Warnings.Any(w => w.Kind == "blocked-thread" && w.Scheduler == "worker") && s.Warnings.Any(w => w.Kind == "stall" && w.Scheduler == "worker"),
                "the blocked loop and its stall");
        }

        ThreadSnapshot loop = snapshot.Schedulers.Single(s => s.Name == "worker").ThreadStates.Single();
        loop.State.Should().Be("blocked");
        loop.Method.Should().Be("Worker.BlockingCallback");
        loop.Level.Should().Be(1);
        loop.Exact.Should().BeFalse("the item started before the session: its run time is a lower bound");
        loop.RunningForMs.Should().BeGreaterThanOrEqualTo(StallTimeoutMs, "the watchdog saw the loop on this item a stall timeout before it reported");

        Warning blocked = snapshot.Warnings.Single(w => w.Kind == "blocked-thread" && w.Scheduler == "worker");
        blocked.Method.Should().Be("Worker.BlockingCallback");
        blocked.Message.Should().Contain("the loop thread is blocked in a synchronous wait in Worker.BlockingCallback (running at least ");
        Warning stall = snapshot.Warnings.Single(w => w.Kind == "stall" && w.Scheduler == "worker");
        stall.Method.Should().Be("Worker.BlockingCallback");
        stall.DurationMs.Should().BeGreaterThanOrEqualTo(0);
        stall.Message.Should().StartWith("worker stalled: no item started for ").And.Contain("blocked in Worker.BlockingCallback");
        snapshot.Events.Should().ContainSingle(e => e.Kind == "stall" && e.Scheduler == "worker").Which.Method.Should().Be("Worker.BlockingCallback");

        // What the view draws: the loop is not idle, and it says what it runs.
        var console = new TestConsole().Width(160);
        console.Write(SnapshotView.Render(snapshot, "attached"));
        console.Output.Should().Contain("loop: blocked in a synchronous wait in Worker.BlockingCallback at level 1 for >= ");
        console.Output.Should().NotContain("loop: idle");
        await target.SendAsync("release");
    }

    [Fact]
    public async Task Once_LoopStuckBeforeTheSession_TextNamesWhatTheLoopRuns()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        await target.SendAsync("stall");
        await target.WaitForLineAsync("stalled worker");

        (int exitCode, string output, string error) = await Prio.RunAsync(target.Id.ToString(CultureInfo.InvariantCulture), "--once", "--for", "1");

        exitCode.Should().Be(ExitCodes.Success, error);
        output.Should().Contain("loop: blocked in a synchronous wait in Worker.BlockingCallback at level 1 for >= ");
        output.Should().Contain("blocked-thread: worker: the loop thread is blocked in a synchronous wait in Worker.BlockingCallback");
        output.Should().NotContain("No warnings.");
        await target.SendAsync("release");
    }

    [Fact]
    public async Task Attach_PoolThreadStuckBeforeTheSession_WarnsWithTheCallback()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        await target.SendAsync("pool-block");
        await target.WaitForLineAsync("blocking pool"); // running before the session starts

        var model = new InspectorModel { ProcessId = target.Id };
        await using (InspectorSession.Start(target.Id, model, new SessionOptions()))
        {
            Snapshot snapshot = await AttachTests.WaitForAsync(
                model,
                s => s.Warnings.Any(w => w.Kind == "blocked-thread" && w.Scheduler == "pool"),
                "the blocked pool thread");

            Warning blocked = snapshot.Warnings.Single(w => w.Kind == "blocked-thread" && w.Scheduler == "pool");
            blocked.Method.Should().Be("Worker.PoolBlockingCallback");
            blocked.Level.Should().Be(1);
            blocked.Message.Should().Contain("pool thread #").And.Contain("blocked in a synchronous wait in Worker.PoolBlockingCallback");
            ThreadSnapshot thread = snapshot.Schedulers.Single(s => s.Name == "pool").ThreadStates.Single(t => t.Method == "Worker.PoolBlockingCallback");
            thread.State.Should().Be("blocked");
            thread.Exact.Should().BeFalse();
        }

        await target.SendAsync("release");
    }

    [Fact]
    public async Task Attach_SampledLoopStuckDuringTheSession_NamesTheBlockingCallbackAndItsStall()
    {
        // One item sampled per second (--every-item-below 0 --sample 1000): the heartbeat, every 20 ms, takes nearly every sample,
        // so the blocking item is named from the loop's own record (and, now and then, as the second's sample: named either way).
        await using TestTarget target = await TestTarget.StartAsync();
        var model = new InspectorModel { ProcessId = target.Id };
        await using InspectorSession session = InspectorSession.Start(target.Id, model, new SessionOptions(SamplePeriodMs: 1000, AllItemsBelow: 0));
        await target.WaitForLineAsync("inspector on");
        await AttachTests.WaitForAsync(model, s => s.Schedulers.Any(x => x.Name == "worker" && !x.ObservesEveryItem), "the worker, sampled");

        await target.SendAsync("stall");
        await target.WaitForLineAsync("stalled worker");
        Snapshot snapshot = await AttachTests.WaitForAsync(
            model,
            s => s.Events.Any(e => e.Kind == "stall" && e.Scheduler == "worker")
                 && s.Schedulers.Single(x => x.Name == "worker").ThreadStates.Single().State == "blocked",
            "the stall and the blocked loop");

        ThreadSnapshot loop = snapshot.Schedulers.Single(x => x.Name == "worker").ThreadStates.Single();
        loop.Method.Should().Be("Worker.BlockingCallback");
        loop.Level.Should().Be(1);
        snapshot.Events.Should().Contain(e => e.Kind == "stall" && e.Scheduler == "worker" && e.Method == "Worker.BlockingCallback");
        snapshot.Warnings.Should().Contain(w => w.Kind == "stall" && w.Method == "Worker.BlockingCallback");
        await target.SendAsync("release");
    }
}
