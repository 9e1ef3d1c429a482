using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

[Collection(DiagnosticsCollection.Name)]
public sealed class PriorityMetricsTests
{
    private static string UniqueName() => "metrics-" + Guid.NewGuid().ToString("N");

    [Fact]
    public async Task ObservableInstruments_KnownWorkload_CountsAndQueueLengthsExactPerLevel()
    {
        string name = UniqueName();
        using var capture = new MetricsCapture(name, "priorityasync.work_item.count", "priorityasync.queue.length");
        Dictionary<int, double>? queuedBefore = null, runBefore = null, queuedAfter = null, runAfter = null;
        PriorityContext? context = null;

        await Task.Run(() => PriorityContext.Run(
            async () =>
            {
                context = PriorityContext.Current!;
                Post(context, level: 0, count: 4);
                Post(context, level: 1, count: 3);
                Post(context, level: 2, count: 2);

                capture.Collect();
                queuedBefore = Latest(capture, "priorityasync.queue.length");
                runBefore = Latest(capture, "priorityasync.work_item.count");
                capture.Clear();

                await context.Yield(0); // behind the 4 items of level 0, so after all 9

                capture.Collect();
                queuedAfter = Latest(capture, "priorityasync.queue.length");
                runAfter = Latest(capture, "priorityasync.work_item.count");
                capture.Clear();
            },
            new PriorityContextOptions { Name = name, Levels = 3 })).WithTimeout("the context");

        queuedBefore.Should().Equal(new Dictionary<int, double> { [0] = 4, [1] = 3, [2] = 2 });
        runBefore.Should().Equal(new Dictionary<int, double> { [0] = 1, [1] = 0, [2] = 0 }); // the entry point itself
        queuedAfter.Should().Equal(new Dictionary<int, double> { [0] = 0, [1] = 0, [2] = 0 });
        runAfter.Should().Equal(new Dictionary<int, double> { [0] = 6, [1] = 3, [2] = 2 }); // entry, 4 items, the continuation

        // Once the loop has ended, the context is no longer observed (and no longer referenced by the registry).
        capture.Collect();
        capture.Measurements.Should().BeEmpty();
        ContextRegistry.Live.Should().NotContain(context!);
    }

    [Fact]
    public async Task Histograms_InjectedClock_OneMeasurementPerItemAndSumsWithinClockSteps()
    {
        string name = UniqueName();
        var clock = new StepClock();
        long[] work = [100, 250, 40, 1_000, 7, 300, 90, 60, 500, 20];
        using var capture = new MetricsCapture(name, "priorityasync.work_item.wait.duration", "priorityasync.work_item.run.duration");

        await Task.Run(() => PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                foreach (long ticks in work)
                {
                    context.GetSynchronizationContext(1).Post(_ => clock.Advance(ticks), null);
                }
            },
            new PriorityContextOptions { Name = name, Levels = 2, Clock = clock })).WithTimeout("the context");

        List<MetricsCapture.Recorded> runs = capture.Of("priorityasync.work_item.run.duration").Where(m => m.Level == 1).ToList();
        List<MetricsCapture.Recorded> waits = capture.Of("priorityasync.work_item.wait.duration").Where(m => m.Level == 1).ToList();
        runs.Should().HaveCount(work.Length);
        waits.Should().HaveCount(work.Length);
        runs.Should().OnlyContain(m => m.Unit == "s");

        // Each item's run time is its own work plus at most a few clock steps (the readings themselves); all 1 tick = 1 µs.
        const long slack = 4 * StepClock.Step;
        for (int i = 0; i < work.Length; i++)
        {
            long microseconds = (long)Math.Round(runs[i].Value * 1_000_000);
            microseconds.Should().BeInRange(work[i], work[i] + slack, $"item {i} advanced the clock by {work[i]} ticks");

            // Posted together, the items wait for the work of the items before them (FIFO), plus the entry's remaining steps.
            long before = work.Take(i).Sum();
            long waited = (long)Math.Round(waits[i].Value * 1_000_000);
            waited.Should().BeInRange(before, before + ((i + 1) * slack) + (work.Length * slack), $"item {i} waited for the {i} items ahead of it");
        }

        runs.Sum(m => m.Value * 1_000_000).Should().BeInRange(work.Sum(), work.Sum() + (work.Length * slack));
    }

    [Fact]
    public async Task Histograms_NoListener_LoopTakesNoClockReadings()
    {
        var clock = new StepClock();
        int slowPaths = -1;

        await Task.Run(() => PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                slowPaths = Volatile.Read(ref context._slowPaths);
                Post(context, level: 1, count: 100);
            },
            new PriorityContextOptions { Name = UniqueName(), Levels = 2, Clock = clock })).WithTimeout("the context");

        slowPaths.Should().Be(SlowPaths.None);
        clock.Reads.Should().Be(0);
    }

    [Fact]
    public async Task SlowPaths_ListenerEnablesWhileLoopRuns_SeenAsTheLoopWakesThenOff()
    {
        string name = UniqueName();
        int whileListening = -1, afterDispose = -1;

        await Task.Run(() => PriorityContext.Run(
            async () =>
            {
                PriorityContext context = PriorityContext.Current!;
                using (new MetricsCapture(name, "priorityasync.work_item.run.duration"))
                {
                    whileListening = await PollUntil(context, paths => paths != SlowPaths.None);
                }

                afterDispose = await PollUntil(context, paths => paths == SlowPaths.None);
            },
            new PriorityContextOptions { Name = name })).WithTimeout("the context");

        whileListening.Should().Be(SlowPaths.RunTime);
        afterDispose.Should().Be(SlowPaths.None);
    }

    [Fact]
    public async Task Dropped_PostAfterCompletion_CountedWithLevelAndReason()
    {
        string name = UniqueName();
        using var capture = new MetricsCapture(name, "priorityasync.work_item.dropped");
        PriorityContext? context = null;
        await Task.Run(() => PriorityContext.Run(() => context = PriorityContext.Current, new PriorityContextOptions { Name = name, Levels = 3 }))
            .WithTimeout("the context");

        context!.GetSynchronizationContext(2).Post(_ => { }, null);
        context.GetSynchronizationContext(2).Post(_ => { }, null);

        List<MetricsCapture.Recorded> dropped = capture.Of("priorityasync.work_item.dropped");
        dropped.Should().HaveCount(2);
        dropped.Should().OnlyContain(m => m.Value == 1 && m.Level == 2 && (string)m.Tags["priorityasync.drop.reason"]! == "posted_after_completion");
    }

    [Fact]
    public async Task Exceptions_HandledAndUnhandled_CountedWithErrorTypeAndResult()
    {
        string name = UniqueName();
        using var capture = new MetricsCapture(name, "priorityasync.exceptions");
        Func<Task> run = () => Task.Run(() => PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                context.UnhandledException += (_, e) => e.Handled = e.Exception is InvalidOperationException;
                context.GetSynchronizationContext(2).Post(_ => throw new InvalidOperationException("handled"), null);
                context.GetSynchronizationContext(1).Post(_ => throw new FormatException("not handled"), null);
            },
            new PriorityContextOptions { Name = name, Levels = 3 })).WithTimeout("the context");

        await run.Should().ThrowAsync<FormatException>();

        capture.Of("priorityasync.exceptions").Select(m => (m.Level, (string)m.Tags["error.type"]!, (string)m.Tags["priorityasync.exception.result"]!))
            .Should().Equal((2, typeof(InvalidOperationException).FullName!, "handled"), (1, typeof(FormatException).FullName!, "unhandled"));
    }

    private static void Post(PriorityContext context, int level, int count)
    {
        for (int i = 0; i < count; i++)
        {
            context.GetSynchronizationContext(level).Post(static _ => { }, null);
        }
    }

    private static Dictionary<int, double> Latest(MetricsCapture capture, string instrument) =>
        capture.Of(instrument).GroupBy(m => m.Level).ToDictionary(g => g.Key, g => g.Last().Value);

    /// <summary>Yields the loop until the context's slow-path bits satisfy <paramref name="done"/> (the registry's timer sets them).</summary>
    private static async Task<int> PollUntil(PriorityContext context, Func<int, bool> done)
    {
        DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (true)
        {
            int paths = Volatile.Read(ref context._slowPaths);
            if (done(paths))
            {
                return paths;
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"The slow-path bits stayed {paths}: the registry's refresh never ran.");
            }

            await Task.Delay(50);
        }
    }
}
