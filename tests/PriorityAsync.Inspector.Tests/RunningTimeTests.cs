using System.Globalization;

namespace PriorityAsync.Inspector.Tests;

/// <summary>
/// How long a thread has been on its item: what its last sample said, never stretched to the time of later events. Scripted events
/// give exact figures; the real target's recording checks the samples against the items' own run times and the view against the
/// samples.
/// </summary>
public sealed class RunningTimeTests
{
    [Theory]
    [InlineData(50)]
    [InlineData(200)]
    [InlineData(500)]
    public void Snapshot_ShortItemsBetweenSamples_RunningForIsTheSampledRunTimeNotThePeriod(int periodMs)
    {
        // 5 ms items back to back for two periods, every item observed; a sample mid-item each period. The snapshot is taken after
        // the last item's event, most of a period after the last sample.
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info(periodMs));
        for (double end = 5; end <= 2 * periodMs; end += 5)
        {
            if ((int)end % periodMs == 0)
            {
                model.OnEvent("ThreadState", end - 2.5, Thread(state: 1, "Worker.Step", runningFor: 2.5, exact: 1));
            }

            model.OnEvent("ItemRun", end, Item("Worker.Step", run: 5));
        }

        model.OnEvent("ThreadState", (2 * periodMs) + 3, Thread(state: 1, "Worker.Step", runningFor: 2.0, exact: 1));
        for (double end = (2 * periodMs) + 5; end < (3 * periodMs) - 5; end += 5)
        {
            ThreadSnapshot between = model.TakeSnapshot().Schedulers.Single().ThreadStates.Single();
            (between.State == "idle" || between.RunningForMs <= 5).Should().BeTrue($"at {end} ms the thread is between items or on one that runs 5 ms, not {between.RunningForMs} ms");
            model.OnEvent("ItemRun", end, Item("Worker.Step", run: 5));
        }

        ThreadSnapshot last = model.TakeSnapshot().Schedulers.Single().ThreadStates.Single();
        last.State.Should().Be("idle", "the item the last sample named has ended: later items ran");
        last.RunningForMs.Should().Be(0);
    }

    [Fact]
    public void Snapshot_NoEventAfterTheSample_RunningForIsTheSampledValue()
    {
        var model = new InspectorModel();
        model.OnEvent("SchedulerInfo", 0, Info(200));
        model.OnEvent("ThreadState", 1000, Thread(state: 2, "Worker.Blocked", runningFor: 750, exact: 0));
        model.OnEvent("LevelState", 1900, new Payload { ["schedulerId"] = 1, ["level"] = 0, ["queued"] = 0, ["started"] = 5L, ["running"] = -1 });

        ThreadSnapshot loop = model.TakeSnapshot().Schedulers.Single().ThreadStates.Single();
        loop.State.Should().Be("blocked");
        loop.RunningForMs.Should().Be(750, "the figure is the last sample's (to the period's resolution), not the sample stretched by 900 ms to the latest event");
        loop.Exact.Should().BeFalse();
    }

    [Fact]
    public async Task Record_ShortItemsLongSamplePeriod_EachSampleAtMostItsItemsRunTimeAndTheViewNeverMore()
    {
        string recording = Path.Combine(Path.GetTempPath(), $"prio-running-{Guid.NewGuid():N}.nettrace");
        try
        {
            await using (TestTarget target = await TestTarget.StartAsync())
            {
                using Prio.Running prio = Prio.Start(target.Id.ToString(CultureInfo.InvariantCulture), "--record", recording, "--no-view", "--sample", "500");
                await target.WaitForLineAsync("inspector on");
                await target.SendAsync("churn 5 400"); // 5 ms items back to back: about 2 s, several samples
                (int exitCode, _, string error) = await prio.QuitAsync();
                exitCode.Should().Be(ExitCodes.Success, error);
            }

            var events = new List<(string Name, double AtMs, TracePayload Payload)>();
            using (FileStream file = File.OpenRead(recording))
            {
                EventStreamReader.Read(file, new InspectorModel(), data => events.Add((data.EventName, data.TimeStampRelativeMSec, new TracePayload(data.Clone())))); // the reader reuses its event objects
            }

            int worker = events.First(e => e.Name == "SchedulerInfo" && e.Payload.String("scheduler") == "worker").Payload.Int("schedulerId");
            bool OfWorker(TracePayload payload) => payload.Has("schedulerId") && payload.Int("schedulerId") == worker;

            // Each sample that named a churn item saw it before it ended: at most that item's run time, so at most the longest one's
            // (the recording holds the end of every churn item: the churn was done before the session stopped).
            double longest = events.Where(e => e.Name == "ItemRun" && OfWorker(e.Payload) && e.Payload.String("method") == "Worker.ChurnItem").Max(e => e.Payload.Double("runMilliseconds"));
            var samples = events.Where(e => e.Name == "ThreadState" && OfWorker(e.Payload) && e.Payload.String("method") == "Worker.ChurnItem" && e.Payload.Int("exact") == 1).ToList();
            samples.Should().NotBeEmpty("the churn items run nearly all of the 2 s, so some samples fall inside one");
            samples.Should().OnlyContain(e => e.Payload.Double("runningForMilliseconds") <= longest + 0.001);

            // The view says at most what the thread's last sample said, whatever came after it.
            var model = new InspectorModel();
            double? lastSample = null;
            foreach ((string name, double at, TracePayload payload) in events)
            {
                model.OnEvent(name, at, payload);
                if (!OfWorker(payload))
                {
                    continue;
                }

                if (name == "ThreadState")
                {
                    lastSample = payload.Double("runningForMilliseconds");
                }
                else if (name == "ItemRun" && lastSample is { } sampled)
                {
                    ThreadSnapshot loop = model.TakeSnapshot().Schedulers.Single(s => s.Name == "worker").ThreadStates.Single();
                    loop.RunningForMs.Should().BeLessThanOrEqualTo(sampled + 0.001, $"the item that ended at {at:F1} ms came after the sample");
                }
            }
        }
        finally
        {
            File.Delete(recording);
        }
    }

    private static Payload Info(int periodMs) => new()
    {
        ["schemaVersion"] = 2, ["schedulerId"] = 1, ["scheduler"] = "loop", ["kind"] = "PriorityContext", ["levels"] = 1, ["threads"] = 1,
        ["policy"] = "Strict", ["timeSliceMilliseconds"] = -1.0, ["stallTimeoutMilliseconds"] = -1.0, ["samplePeriodMilliseconds"] = periodMs,
    };

    private static Payload Thread(int state, string method, double runningFor, int exact) => new()
    {
        ["schedulerId"] = 1, ["thread"] = 0, ["dispatched"] = 1L, ["state"] = state, ["level"] = 0, ["method"] = method,
        ["runningForMilliseconds"] = runningFor, ["exact"] = exact, ["stalledForMilliseconds"] = -1.0,
    };

    private static Payload Item(string method, double run) => new()
    {
        ["schedulerId"] = 1, ["thread"] = 0, ["level"] = 0, ["method"] = method, ["runMilliseconds"] = run, ["waitMilliseconds"] = 0.0,
        ["timerLateMilliseconds"] = -1.0, ["sampled"] = 0,
    };
}
