using System.Diagnostics;

namespace PriorityAsync.Inspector.Tests;

/// <summary>The inspector attached to a real process: what the snapshot names. Every wait is gated on what the target or the
/// inspector reports, and bounded; the only claim about time is that a callback made slow by N ms is reported as at least N ms.</summary>
public sealed class AttachTests
{
    [Fact]
    public async Task Attach_Worker_SnapshotNamesSchedulersLevelsSlowCallbackLateTimerAndFault()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        var model = new InspectorModel { ProcessId = target.Id, ProcessName = "target" };
        InspectorSession session = InspectorSession.Start(target.Id, model, new SessionOptions());
        await using (session)
        {
            await target.WaitForLineAsync("inspector on");
            await WaitForAsync(
                model,
                s => s.Schedulers.Count == 2 && s.Schedulers.All(x => x.ObservesEveryItem) && s.Schedulers.Any(x => x.TopCallbacks.Any(c => c.Method == "Worker.Heartbeat")),
                "both schedulers, every item observed");

            await target.SendAsync("slow 200");
            await target.SendAsync("late-timer");
            await target.SendAsync("fault");
            Snapshot snapshot = await WaitForAsync(
                model,
                s => s.Warnings.Any(w => w.Kind == "late-timer") && s.Events.Any(e => e.Kind == "fault")
                     && s.Schedulers.Single(x => x.Name == "worker").TopCallbacks.Any(c => c.Method == "Worker.SlowCallback"),
                "the slow callback, the late timer and the fault");

            SchedulerSnapshot worker = snapshot.Schedulers.Single(s => s.Name == "worker");
            worker.Kind.Should().Be("PriorityContext");
            worker.Threads.Should().Be(1);
            worker.Levels.Select(l => l.Level).Should().Equal(2, 1, 0);
            worker.TimeSliceMs.Should().Be(20);
            worker.StallTimeoutMs.Should().Be(500);
            SchedulerSnapshot pool = snapshot.Schedulers.Single(s => s.Name == "pool");
            pool.Kind.Should().Be("PriorityThreadPool");
            pool.Threads.Should().Be(2);
            pool.Levels.Select(l => l.Level).Should().Equal(1, 0);

            CallbackStats slow = worker.TopCallbacks.Single(c => c.Method == "Worker.SlowCallback");
            slow.Level.Should().Be(1);
            slow.MaxMs.Should().BeGreaterThanOrEqualTo(200, "the callback was made busy for 200 ms");
            snapshot.Warnings.Should().Contain(w => w.Kind == "time-slice" && w.Method == "Worker.SlowCallback" && w.DurationMs >= 200);

            // One late-timer warning per timer: on a busy machine another of the target's timers may be late too.
            Warning late = snapshot.Warnings.Single(w => w.Kind == "late-timer" && w.Method == "Worker.LeaseRefresh");
            late.Level.Should().Be(2);
            late.DurationMs.Should().BeGreaterThanOrEqualTo(290, "the timer was due 10 ms into an item made busy for 300 ms");
            worker.LastLateTimer!.Method.Should().Be("Worker.LeaseRefresh");

            InspectorEvent fault = snapshot.Events.Single(e => e.Kind == "fault");
            fault.Scheduler.Should().Be("worker");
            fault.Method.Should().Be("Worker.FaultingWork");
            fault.Detail.Should().Contain("InvalidOperationException").And.Contain("lease lost");
        }

        // Detached: the target is as it was.
        await target.WaitForLineAsync("inspector off");
        (await target.StatusAsync()).Should().Be("status enabled=False inspector=False sampler=0");
    }

    [Fact]
    public async Task Attach_LoopBlockedInAWait_StallNamesTheBlockingCallback()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        var model = new InspectorModel { ProcessId = target.Id };
        await using InspectorSession session = InspectorSession.Start(target.Id, model, new SessionOptions());
        await target.WaitForLineAsync("inspector on");
        await WaitForAsync(model, s => s.Schedulers.Any(x => x.Name == "worker" && x.ObservesEveryItem && x.TopCallbacks.Any(c => c.Method == "Worker.Heartbeat")), "the worker, every item observed");

        await target.SendAsync("stall");
        Snapshot snapshot = await WaitForAsync(
            model,
            s => s.Events.Any(e => e.Kind == "stall" && e.Scheduler == "worker")
                 && s.Schedulers.Single(x => x.Name == "worker").ThreadStates.Single().State == "blocked",
            "the stall report and the loop blocked");
        InspectorEvent stall = snapshot.Events.First(e => e.Kind == "stall" && e.Scheduler == "worker");
        stall.Method.Should().Be("Worker.BlockingCallback");
        stall.Detail.Should().Contain("blocked in Worker.BlockingCallback");
        ThreadSnapshot loop = snapshot.Schedulers.Single(x => x.Name == "worker").ThreadStates.Single();
        loop.Method.Should().Be("Worker.BlockingCallback");
        loop.Level.Should().Be(1);
        snapshot.Warnings.Should().Contain(w => w.Kind == "stall" && w.Method == "Worker.BlockingCallback");
        await target.SendAsync("release");
    }

    [Fact]
    public async Task Attach_PoolThreadBlockedInAWait_WarnsWithTheCallback()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        var model = new InspectorModel { ProcessId = target.Id };
        await using InspectorSession session = InspectorSession.Start(target.Id, model, new SessionOptions());
        await target.WaitForLineAsync("inspector on");
        await WaitForAsync(model, s => s.Schedulers.Any(x => x.Name == "pool" && x.ObservesEveryItem), "the pool, every item observed");

        await target.SendAsync("pool-block");
        Snapshot snapshot = await WaitForAsync(model, s => s.Warnings.Any(w => w.Kind == "blocked-thread" && w.Scheduler == "pool"), "the blocked pool thread");
        Warning blocked = snapshot.Warnings.Single(w => w.Kind == "blocked-thread" && w.Scheduler == "pool");
        blocked.Method.Should().Be("Worker.PoolBlockingCallback");
        blocked.Message.Should().Contain("pool thread #").And.Contain("synchronous wait");
        await target.SendAsync("release");
    }

    [Fact]
    public async Task Once_Json_PrintsOneSnapshotAndLeavesNothingInTheTarget()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        (int exitCode, string output, string error) = await Prio.RunAsync(target.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), "--once", "--json", "--for", "0.5");

        exitCode.Should().Be(ExitCodes.Success, error);
        Snapshot snapshot = SnapshotJson.Deserialize(output)!;
        snapshot.Schema.Should().Be(2, "schema 2 added the escalations");
        snapshot.ProcessId.Should().Be(target.Id);
        snapshot.Schedulers.Select(s => (s.Name, s.Kind, s.LevelCount)).Should().BeEquivalentTo(new[] { ("worker", "PriorityContext", 3), ("pool", "PriorityThreadPool", 2) });
        await target.WaitForLineAsync("inspector off");
        (await target.StatusAsync()).Should().Be("status enabled=False inspector=False sampler=0");
    }

    [Fact]
    public async Task Record_ThenReplayAndChromeExport_ShowWhatTheSessionSaw()
    {
        string directory = Directory.CreateTempSubdirectory("prio-record-").FullName;
        try
        {
            string recording = Path.Combine(directory, "worker.nettrace");
            int recorded;
            await using (TestTarget target = await TestTarget.StartAsync())
            {
                recorded = target.Id;
                using Prio.Running prio = Prio.Start(target.Id.ToString(System.Globalization.CultureInfo.InvariantCulture), "--record", recording, "--no-view");
                await target.WaitForLineAsync("inspector on");
                await target.SendAsync("slow 120");
                (int exitCode, _, string error) = await prio.QuitAsync(); // stopping the session flushes what the target wrote
                exitCode.Should().Be(ExitCodes.Success, error);
                await target.WaitForLineAsync("inspector off");
            }

            (int replayCode, string json, string replayError) = await Prio.RunAsync("replay", recording, "--once", "--json");
            replayCode.Should().Be(ExitCodes.Success, replayError);
            Snapshot replayed = SnapshotJson.Deserialize(json)!;
            replayed.ProcessId.Should().Be(recorded, "the recording holds the recorded process's id");
            replayed.Schedulers.Should().Contain(s => s.Name == "worker");
            (int textCode, string text, string textError) = await Prio.RunAsync("replay", recording, "--once");
            textCode.Should().Be(ExitCodes.Success, textError);
            text.Should().StartWith($"prio · PriorityAsync inspector · pid {recorded} (worker.nettrace) · ").And.NotContain("q: quit");
            replayed.Warnings.Should().Contain(w => w.Kind == "time-slice" && w.Method == "Worker.SlowCallback" && w.DurationMs >= 120);

            string chrome = Path.Combine(directory, "trace.json");
            (int chromeCode, _, string chromeError) = await Prio.RunAsync("replay", recording, "--chrome", chrome);
            chromeCode.Should().Be(ExitCodes.Success, chromeError);
            using var document = System.Text.Json.JsonDocument.Parse(File.ReadAllText(chrome));
            var slices = document.RootElement.GetProperty("traceEvents").EnumerateArray().Where(e => e.GetProperty("ph").GetString() == "X").ToList();
            var slow = slices.Single(e => e.GetProperty("name").GetString() == "Worker.SlowCallback");
            slow.GetProperty("dur").GetDouble().Should().BeGreaterThanOrEqualTo(120_000, "microseconds of a callback made busy for 120 ms");
            slow.GetProperty("args").GetProperty("context").GetString().Should().Be("worker");
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    internal static async Task<Snapshot> WaitForAsync(InspectorModel model, Func<Snapshot, bool> condition, string what)
    {
        var clock = Stopwatch.StartNew();
        using var changed = new SemaphoreSlim(0);
        void OnChanged() => changed.Release();
        model.Changed += OnChanged;
        try
        {
            while (true)
            {
                Snapshot snapshot = model.TakeSnapshot();
                if (condition(snapshot))
                {
                    return snapshot;
                }

                TimeSpan left = TestTarget.Unexpected - clock.Elapsed;
                if (left <= TimeSpan.Zero)
                {
                    throw new TimeoutException($"The inspector never saw {what} within {TestTarget.Unexpected.TotalSeconds} s. Last snapshot: {SnapshotJson.Serialize(snapshot)}");
                }

                await changed.WaitAsync(TimeSpan.FromMilliseconds(Math.Min(200, left.TotalMilliseconds)));
            }
        }
        finally
        {
            model.Changed -= OnChanged;
        }
    }
}
