using Spectre.Console.Testing;

namespace PriorityAsync.Inspector.Tests;

/// <summary>The view drawn on a console of fixed size, from a model fed the events a session would read.</summary>
public sealed class ViewTests
{
    [Fact]
    public void Render_FixedSizeConsole_NamesWhatRunsWaitsAndWarnsWithinTheWidth()
    {
        InspectorModel model = ScriptedModel();
        var console = new TestConsole().Width(100);
        console.Profile.Height = 60;

        console.Write(SnapshotView.Render(model.TakeSnapshot(), "attached"));

        string[] lines = console.Lines.ToArray();
        lines.Should().OnlyContain(line => line.Length <= 100, "nothing is drawn past the console's width");
        string screen = string.Join('\n', lines);
        screen.Should().Contain("pid 42 (worker-app)");
        screen.Should().Contain("worker · PriorityContext · 1 thread · 3 levels · Strict");
        screen.Should().Contain("loop: blocked in a synchronous wait in Worker.KeepLeaseAsync at level 1 for 1.5 s");
        screen.Should().Contain("Worker.ProcessAsync");
        screen.Should().Contain("time-slice").And.Contain("Worker.ProcessAsync ran 250 ms at level 0 without a checkpoint");
        screen.Should().Contain("late-timer").And.Contain("loop timer Worker.RefreshLease at level 2 fired 180 ms late");
        screen.Should().Contain("fault worker level 1 Worker.KeepLeaseAsync");
    }

    [Fact]
    public void Snapshot_ScriptedEvents_PercentilesAndRatesFromTheEvents()
    {
        Snapshot snapshot = ScriptedModel().TakeSnapshot();

        SchedulerSnapshot worker = snapshot.Schedulers.Single();
        LevelSnapshot level0 = worker.Levels.Single(l => l.Level == 0);
        level0.RunP99Ms.Should().Be(250);
        level0.WaitSource.Should().Be("items");
        level0.WaitP50Ms.Should().Be(2);
        level0.StartedPerSecond.Should().Be(20, "20 items between the samples at 2 s and 3 s");
        worker.TopCallbacks[0].Should().Be(new CallbackStats("Worker.ProcessAsync", 0, 2, 260, 250, false));
        SnapshotJson.Deserialize(SnapshotJson.Serialize(snapshot)).Should().BeEquivalentTo(snapshot);
    }

    private static InspectorModel ScriptedModel()
    {
        var model = new InspectorModel { ProcessId = 42, ProcessName = "worker-app" };
        model.OnEvent("SchedulerInfo", 0, new Payload
        {
            ["schemaVersion"] = 1, ["schedulerId"] = 1, ["scheduler"] = "worker", ["kind"] = "PriorityContext", ["levels"] = 3, ["threads"] = 1,
            ["policy"] = "Strict", ["timeSliceMilliseconds"] = 20.0, ["stallTimeoutMilliseconds"] = 10_000.0, ["samplePeriodMilliseconds"] = 50,
        });
        model.OnEvent("SchedulerState", 0, new Payload { ["schedulerId"] = 1, ["allItems"] = 1, ["armedTimers"] = 2 });
        foreach ((double at, long started) in new[] { (2000.0, 100L), (3000.0, 120L) })
        {
            for (int level = 0; level < 3; level++)
            {
                model.OnEvent("LevelState", at, new Payload { ["schedulerId"] = 1, ["level"] = level, ["queued"] = 0, ["started"] = level == 0 ? started : 0L, ["running"] = -1 });
            }
        }

        model.OnEvent("ItemRun", 3100, Item(0, "Worker.ProcessAsync", run: 250, wait: 2, late: -1));
        model.OnEvent("ItemRun", 3200, Item(0, "Worker.ProcessAsync", run: 10, wait: 3, late: -1));
        model.OnEvent("ItemRun", 3300, Item(2, "Worker.RefreshLease", run: 0.1, wait: 180, late: 180));
        model.OnEvent("WorkFaulted", 3400, new Payload
        {
            ["context"] = "worker", ["level"] = 1, ["kind"] = "InvokeAsync", ["method"] = "Worker.KeepLeaseAsync",
            ["exceptionType"] = "System.InvalidOperationException", ["exceptionMessage"] = "lease lost",
        });
        model.OnEvent("ThreadState", 3500, new Payload
        {
            ["schedulerId"] = 1, ["thread"] = 0, ["dispatched"] = 123L, ["state"] = 2, ["level"] = 1, ["method"] = "Worker.KeepLeaseAsync",
            ["runningForMilliseconds"] = 1500.0, ["exact"] = 1,
        });
        return model;
    }

    private static Payload Item(int level, string method, double run, double wait, double late) => new()
    {
        ["schedulerId"] = 1, ["thread"] = 0, ["level"] = level, ["method"] = method, ["runMilliseconds"] = run, ["waitMilliseconds"] = wait,
        ["timerLateMilliseconds"] = late, ["sampled"] = 0,
    };
}
