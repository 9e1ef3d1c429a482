namespace PriorityAsync.Inspector.Tests;

/// <summary>The model's judgements from scripted events: the times are the events' own, so each claim is exact.</summary>
public sealed class ModelTests
{
    [Fact]
    public void OnEvent_LevelWaitsFarLongerThanUsualWhileHigherLevelsRun_WarnsOfStarvation()
    {
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info());

        // Level 0 usually drains at once (its probes resolve within a sample); then it keeps 5 items waiting for 2 s while level 1
        // starts 100 items a sample.
        for (int sample = 0; sample <= 10; sample++)
        {
            Level(model, sample * 50.0, level: 0, queued: 0, started: sample);
            Level(model, sample * 50.0, level: 1, queued: 0, started: 0);
        }

        for (int sample = 1; sample <= 40; sample++)
        {
            double at = 500 + (sample * 50.0);
            Level(model, at, level: 0, queued: 5, started: 10);
            Level(model, at, level: 1, queued: 3, started: sample * 100L);
        }

        Warning warning = model.TakeSnapshot().Warnings.Should().ContainSingle(w => w.Kind == "starvation").Subject;
        warning.Level.Should().Be(0);
        warning.DurationMs.Should().BeGreaterThanOrEqualTo(1000);
        warning.Message.Should().Contain("level 0 has had work waiting for").And.Contain("while the levels above it started");
        model.TakeSnapshot().Schedulers.Single().Levels.Single(l => l.Level == 0).OldestWaitMs.Should().Be(1950);
    }

    [Fact]
    public void OnEvent_LevelThatDrains_NoStarvation()
    {
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info());
        for (int sample = 1; sample <= 60; sample++)
        {
            Level(model, sample * 50.0, level: 0, queued: 2, started: sample * 2L); // each sample's probe resolves at the next
            Level(model, sample * 50.0, level: 1, queued: 0, started: sample * 100L);
        }

        Snapshot snapshot = model.TakeSnapshot();
        snapshot.Warnings.Should().BeEmpty();
        LevelSnapshot level0 = snapshot.Schedulers.Single().Levels.Single(l => l.Level == 0);
        level0.WaitSource.Should().Be("probes");
        level0.WaitP99Ms.Should().Be(50, "each probe resolved one sample period later");
    }

    [Fact]
    public void OnEvent_StallOfAnOlderLibrary_ReportsItWithoutTheBlockingItem()
    {
        var model = new InspectorModel();
        model.OnEvent("StallDetected", 1000, new Payload { ["context"] = "old", ["level"] = 2, ["waitingForMilliseconds"] = 10_000L, ["pendingCount"] = 3 });

        InspectorEvent stall = model.TakeSnapshot().Events.Single();
        stall.Kind.Should().Be("stall");
        stall.Detail.Should().Be("old: no item started for 10.0 s while 3 wait; the blocking item started before the inspector attached, or while it sampled");
    }

    private static Payload Info() => new()
    {
        ["schemaVersion"] = 1, ["schedulerId"] = 7, ["scheduler"] = "loop", ["kind"] = "PriorityContext", ["levels"] = 2, ["threads"] = 1,
        ["policy"] = "Strict", ["timeSliceMilliseconds"] = -1.0, ["stallTimeoutMilliseconds"] = -1.0, ["samplePeriodMilliseconds"] = 50,
    };

    private static void Level(InspectorModel model, double at, int level, int queued, long started) =>
        model.OnEvent("LevelState", at, new Payload { ["schedulerId"] = 7, ["level"] = level, ["queued"] = queued, ["started"] = started, ["running"] = -1 });
}
