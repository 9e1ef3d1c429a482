using Spectre.Console.Testing;

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

    [Fact]
    public void OnEvent_StallReportedThenSampledLate_OneStallEventAndWarning()
    {
        // The report says the stall began at 400 ms (1000 - 600); a sample written 40 ms after it measured the stall says 435 ms:
        // the write delays of a busy machine, not a second stall (that one would begin at least a stall timeout later).
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info(stallTimeoutMs: 500));
        model.OnEvent("StallDetected", 1000, new Payload
        {
            ["context"] = "loop", ["level"] = 1, ["waitingForMilliseconds"] = 600L, ["pendingCount"] = 1, ["schedulerId"] = 7, ["thread"] = 0,
            ["blockingMethod"] = "Worker.Blocked", ["blockingForMilliseconds"] = -1.0,
        });
        Level(model, 1050, level: 1, queued: 1, started: 3);
        model.OnEvent("ThreadState", 1050, new Payload
        {
            ["schedulerId"] = 7, ["thread"] = 0, ["dispatched"] = 3L, ["state"] = 2, ["level"] = 0, ["method"] = "Worker.Blocked",
            ["runningForMilliseconds"] = 700.0, ["exact"] = 0, ["stalledForMilliseconds"] = 615.0,
        });

        Snapshot snapshot = model.TakeSnapshot();
        snapshot.Events.Should().ContainSingle(e => e.Kind == "stall").Which.Method.Should().Be("Worker.Blocked");
        snapshot.Warnings.Should().ContainSingle(w => w.Kind == "stall").Which.Count.Should().Be(1);
    }

    [Fact]
    public void OnEvent_EscalationRaisedFurtherThenEnded_OneEscalationWithTheLatestCauseAndTheLibrarysDuration()
    {
        var model = new InspectorModel(windowSeconds: 10);
        model.OnEvent("SchedulerInfo", 0, Info());
        Started(model, 1000, "InvokeAsync Worker.Renew", from: 0, to: 1, "join", "code at level 1");
        Started(model, 1200, "InvokeAsync Worker.Renew", from: 0, to: 2, "join", "code at level 2"); // raised further: the same escalation
        Level(model, 1500, level: 0, queued: 0, started: 1);

        EscalationSnapshot raised = model.TakeSnapshot().Schedulers.Single().Escalations.InForce.Should().ContainSingle().Which;
        (raised.Work, raised.FromLevel, raised.ToLevel, raised.Cause, raised.By).Should().Be(("InvokeAsync Worker.Renew", 0, 2, "join", "code at level 2"));
        raised.RaisedForMs.Should().Be(500, "raised at 1000 ms, the latest event at 1500 ms");
        raised.SinceSeconds.Should().Be(1);

        Ended(model, 2000, "InvokeAsync Worker.Renew", from: 0, to: 2, raisedForMs: 1001);
        EscalationsSnapshot escalations = model.TakeSnapshot().Schedulers.Single().Escalations;
        escalations.InForce.Should().BeEmpty();
        escalations.EndedInWindow.Should().Be(1);
        escalations.LongestEnded.Should().Be(new EscalationSnapshot("InvokeAsync Worker.Renew", 0, 2, "join", "code at level 2", 1001, 0.999));
    }

    [Fact]
    public void OnEvent_EscalationsEndedBeforeAndInTheWindow_CountsTheWindowsAndNamesTheLongest()
    {
        var model = new InspectorModel(windowSeconds: 10);
        model.OnEvent("SchedulerInfo", 0, Info());
        Started(model, 1000, "PriorityLock 'a' region", from: 0, to: 1, "lock", "x");
        Ended(model, 1900, "PriorityLock 'a' region", from: 0, to: 1, raisedForMs: 900); // the longest, but out of the window at the end
        Started(model, 15_000, "PriorityLock 'a' region", from: 0, to: 1, "lock", "y");
        Ended(model, 15_030, "PriorityLock 'a' region", from: 0, to: 1, raisedForMs: 30);
        Ended(model, 16_000, "TaskScope child Worker.Old", from: 0, to: 1, raisedForMs: 50); // raised before the session: only its end seen

        EscalationsSnapshot escalations = model.TakeSnapshot().Schedulers.Single().Escalations;
        escalations.EndedInWindow.Should().Be(2);
        escalations.LongestEnded.Should().Be(new EscalationSnapshot("TaskScope child Worker.Old", 0, 1, null, null, 50, 15.95));
        var console = new TestConsole().Width(200);
        console.Write(SnapshotView.Render(model.TakeSnapshot(), "test"));
        console.Output.Should().Contain("escalations: 0 in force, 2 ended in the window, longest 50.0 ms (TaskScope child Worker.Old from level 0 to 1 (raised before the inspector attached))");
    }

    [Fact]
    public void OnEvent_SchedulerStoppedWhileWorkWasRaised_NothingInForce()
    {
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info());
        Started(model, 100, "InvokeAsync Worker.Renew", from: 0, to: 1, "join", "code at level 1");
        model.OnEvent("SchedulerStopped", 200, new Payload { ["schedulerId"] = 7, ["scheduler"] = "loop" });

        model.TakeSnapshot().Schedulers.Single().Escalations.InForce.Should().BeEmpty();
    }

    [Fact]
    public void OnEvent_LongLockWaitsOfTwoLocks_TwoWarningsAndTheWaitsWithWhetherTheHolderWasRaised()
    {
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info());
        LockWait(model, 1000, "the PriorityLock 'a'", raised: false);
        LockWait(model, 2000, "the PriorityLock 'b'", raised: true);
        LockWait(model, 3000, "the PriorityLock 'a'", raised: false);

        Snapshot snapshot = model.TakeSnapshot();
        snapshot.Warnings.Where(w => w.Kind == "long-lock-wait").Select(w => (w.Message.Contains("'a'", StringComparison.Ordinal), w.Count))
            .Should().BeEquivalentTo([(false, 1), (true, 2)], "one warning per lock, counted");
        snapshot.Schedulers.Single().Escalations.LongLockWaits.Select(w => (w.Lock, w.HolderRaised, w.AtSeconds)).Should().Equal(
            ("the PriorityLock 'a'", false, 1.0), ("the PriorityLock 'b'", true, 2.0), ("the PriorityLock 'a'", false, 3.0));
    }

    private static void Started(InspectorModel model, double at, string work, int from, int to, string cause, string by) =>
        model.OnEvent("EscalationStarted", at, new Payload
        {
            ["context"] = "loop", ["work"] = work, ["fromLevel"] = from, ["toLevel"] = to, ["cause"] = cause, ["by"] = by, ["schedulerId"] = 7,
        });

    private static void Ended(InspectorModel model, double at, string work, int from, int to, double raisedForMs) =>
        model.OnEvent("EscalationEnded", at, new Payload
        {
            ["context"] = "loop", ["work"] = work, ["fromLevel"] = from, ["toLevel"] = to, ["raisedForMilliseconds"] = raisedForMs, ["schedulerId"] = 7,
        });

    private static void LockWait(InspectorModel model, double at, string lockName, bool raised) =>
        model.OnEvent("LockWaitLong", at, new Payload
        {
            ["context"] = "loop", ["level"] = 1, ["lockName"] = lockName, ["waitedMilliseconds"] = 600.0, ["holders"] = "code off every priority scheduler",
            ["holderRaised"] = raised ? 1 : 0, ["schedulerId"] = 7,
        });

    private static Payload Info(double stallTimeoutMs = -1) => new()
    {
        ["schemaVersion"] = 1, ["schedulerId"] = 7, ["scheduler"] = "loop", ["kind"] = "PriorityContext", ["levels"] = 2, ["threads"] = 1,
        ["policy"] = "Strict", ["timeSliceMilliseconds"] = -1.0, ["stallTimeoutMilliseconds"] = stallTimeoutMs, ["samplePeriodMilliseconds"] = 50,
    };

    private static void Level(InspectorModel model, double at, int level, int queued, long started) =>
        model.OnEvent("LevelState", at, new Payload { ["schedulerId"] = 7, ["level"] = level, ["queued"] = queued, ["started"] = started, ["running"] = -1 });
}
