using System.IO;
using System.Text.Json;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>The pool's instruments (the single loop's, plus the running gauge, tagged with the scheduler kind) and its trace slices
/// (one track per thread, the level and thread index in each slice).</summary>
[Collection(DiagnosticsCollection.Name)]
public sealed class PoolDiagnosticsTests
{
    private static string UniqueName() => "pool-diag-" + Guid.NewGuid().ToString("N");

    [Fact]
    public async Task ObservableInstruments_HeldPool_QueueLengthsRunningAndCountsExactPerLevel()
    {
        string name = UniqueName();
        using var capture = new MetricsCapture(name, "priorityasync.work_item.count", "priorityasync.queue.length", "priorityasync.work_item.running");
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = name, ThreadCount = 2, Levels = 3 });
        using var release = new ManualResetEventSlim(false);
        using (var entered = new CountdownEvent(2))
        {
            for (int i = 0; i < 2; i++)
            {
                pool.GetSynchronizationContext(2).Post(_ =>
                {
                    entered.Signal();
                    release.WaitOrFail("the test to release the hold");
                }, null);
            }

            entered.Wait(TestTimeout.Unexpected).Should().BeTrue("both threads enter the hold");
        }

        var done = new CountdownEvent(7); // not disposed: the last item may still be inside Signal
        for (int i = 0; i < 4; i++)
        {
            pool.GetSynchronizationContext(0).Post(_ => done.Signal(), null);
        }

        for (int i = 0; i < 3; i++)
        {
            pool.GetSynchronizationContext(1).Post(_ => done.Signal(), null);
        }

        capture.Collect();
        Latest(capture, "priorityasync.queue.length").Should().Equal(new Dictionary<int, double> { [0] = 4, [1] = 3, [2] = 0 });
        Latest(capture, "priorityasync.work_item.running").Should().Equal(new Dictionary<int, double> { [0] = 0, [1] = 0, [2] = 2 });
        Latest(capture, "priorityasync.work_item.count").Should().Equal(new Dictionary<int, double> { [0] = 0, [1] = 0, [2] = 2 });
        capture.Measurements.Should().OnlyContain(m => (string)m.Tags["priorityasync.scheduler.kind"]! == "PriorityThreadPool");
        capture.Clear();

        release.Set();
        done.Wait(TestTimeout.Unexpected).Should().BeTrue("every item ran");
        await pool.DisposeAsync().AsTask().WithTimeout("the pool to end");
        capture.Collect();
        capture.Measurements.Should().BeEmpty("an ended pool is no longer observed");
        ContextRegistry.Live.Should().NotContain(pool);
        pool.GetSnapshot().RunPerLevel.Should().Equal(4, 3, 2);
    }

    [Fact]
    public async Task ObservableInstruments_SingleLoop_TaggedWithItsKindAndReportsNoRunningGauge()
    {
        string name = UniqueName();
        using var capture = new MetricsCapture(name, "priorityasync.queue.length", "priorityasync.work_item.running");
        await Task.Run(() => PriorityContext.Run(() => capture.Collect(), new PriorityContextOptions { Name = name, Levels = 2 })).WithTimeout("the context");
        capture.Of("priorityasync.queue.length").Should().HaveCount(2).And.OnlyContain(m => (string)m.Tags["priorityasync.scheduler.kind"]! == "PriorityContext");
        capture.Of("priorityasync.work_item.running").Should().BeEmpty("the loop runs one item at most; the gauge is the pool's");
    }

    [Fact]
    public async Task Histograms_ListenerOnBeforeThePool_OneWaitAndOneRunPerItemAndLevel()
    {
        string name = UniqueName();
        using var capture = new MetricsCapture(name, "priorityasync.work_item.wait.duration", "priorityasync.work_item.run.duration");
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = name, ThreadCount = 2, Levels = 3 });
        await using (pool.BoundedDisposal())
        {
            var done = new CountdownEvent(9); // not disposed: the last item may still be inside Signal
            for (int level = 0; level < 3; level++)
            {
                for (int i = 0; i <= level * 2; i++)
                {
                    pool.GetSynchronizationContext(level).Post(_ => done.Signal(), null);
                }
            }

            done.Wait(TestTimeout.Unexpected).Should().BeTrue("every item ran");
        }

        foreach (string instrument in new[] { "priorityasync.work_item.wait.duration", "priorityasync.work_item.run.duration" })
        {
            List<MetricsCapture.Recorded> measurements = capture.Of(instrument);
            measurements.GroupBy(m => m.Level).ToDictionary(g => g.Key, g => g.Count())
                .Should().Equal(new Dictionary<int, int> { [0] = 1, [1] = 3, [2] = 5 }, instrument);
            measurements.Should().OnlyContain(m => m.Value >= 0 && (string)m.Tags["priorityasync.scheduler.kind"]! == "PriorityThreadPool");
        }
    }

    [Fact]
    public async Task TraceRecorder_PoolItems_OneSlicePerItemOnItsThreadsTrack()
    {
        string name = UniqueName();
        using PriorityTraceRecorder recorder = PriorityTraceRecorder.Start();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = name, ThreadCount = 2, Levels = 3 });
        await using (pool.BoundedDisposal())
        {
            var done = new CountdownEvent(12); // not disposed: the last item may still be inside Signal
            for (int i = 0; i < 4; i++)
            {
                for (int level = 0; level < 3; level++)
                {
                    pool.GetSynchronizationContext(level).Post(Step, done);
                }
            }

            done.Wait(TestTimeout.Unexpected).Should().BeTrue("every item ran");
        }

        recorder.Stop();
        using var stream = new MemoryStream();
        recorder.WriteChromeTrace(stream);
        using JsonDocument trace = JsonDocument.Parse(stream.ToArray());
        List<JsonElement> slices = trace.RootElement.GetProperty("traceEvents").EnumerateArray()
            .Where(e => e.GetProperty("ph").GetString() == "X" && e.GetProperty("args").GetProperty("context").GetString() == name)
            .ToList();
        slices.Should().HaveCount(12);
        slices.GroupBy(s => s.GetProperty("args").GetProperty("level").GetInt32()).Select(g => g.Count()).Should().Equal(4, 4, 4);
        slices.Should().OnlyContain(s =>
            s.GetProperty("name").GetString() == "PoolDiagnosticsTests.Step"
            && s.GetProperty("args").GetProperty("kind").GetString() == "PriorityThreadPool"
            && s.GetProperty("args").GetProperty("thread").GetInt32() >= 0
            && s.GetProperty("args").GetProperty("thread").GetInt32() < 2);

        // One track per thread, named as the thread is; every slice on its thread's track, and slices of one track do not overlap.
        Dictionary<int, string> tracks = trace.RootElement.GetProperty("traceEvents").EnumerateArray()
            .Where(e => e.GetProperty("ph").GetString() == "M" && e.GetProperty("name").GetString() == "thread_name")
            .ToDictionary(e => e.GetProperty("tid").GetInt32(), e => e.GetProperty("args").GetProperty("name").GetString()!);
        foreach (IGrouping<int, JsonElement> track in slices.GroupBy(s => s.GetProperty("tid").GetInt32()))
        {
            int thread = track.First().GetProperty("args").GetProperty("thread").GetInt32();
            track.Should().OnlyContain(s => s.GetProperty("args").GetProperty("thread").GetInt32() == thread);
            tracks[track.Key].Should().Be($"{name} #{thread}");
            double previousEnd = double.MinValue;
            foreach (JsonElement slice in track.OrderBy(s => s.GetProperty("ts").GetDouble()))
            {
                slice.GetProperty("ts").GetDouble().Should().BeGreaterThanOrEqualTo(previousEnd - 0.002, "one thread runs one item at a time");
                previousEnd = slice.GetProperty("ts").GetDouble() + slice.GetProperty("dur").GetDouble();
            }
        }
    }

    private static void Step(object? state) => ((CountdownEvent)state!).Signal();

    private static Dictionary<int, double> Latest(MetricsCapture capture, string instrument) =>
        capture.Of(instrument).GroupBy(m => m.Level).ToDictionary(g => g.Key, g => g.Last().Value);
}
