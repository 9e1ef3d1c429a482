using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>What the library emits for the inspector (keyword Inspector of the PriorityAsync event source), read by an in-process
/// listener: the same events an EventPipe session gets.</summary>
[Collection(DiagnosticsCollection.Name)]
public sealed class InspectorEventsTests
{
    private const EventKeywords Inspector = (EventKeywords)0x2;

    [Fact]
    public async Task InspectorKeyword_QuietLoop_NamesSchedulerLevelsAndEveryItemWithItsRunTime()
    {
        string name = "inspected-" + Guid.NewGuid().ToString("N");
        using var listener = new Listener(Inspector);
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();

        EventWrittenEventArgs info = await listener.WaitForAsync(e => e.EventName == "SchedulerInfo" && (string)e.Payload![2]! == name, "the scheduler's info");
        int id = (int)info.Payload![1]!;
        info.Payload[3].Should().Be("PriorityContext");
        info.Payload[4].Should().Be(2);
        info.Payload[5].Should().Be(1);
        info.Payload[0].Should().Be(PriorityEventSource.SchemaVersion);
        await listener.WaitForAsync(e => e.EventName == "SchedulerState" && (int)e.Payload![0]! == id && (int)e.Payload[1]! == 1, "every item observed");

        loop.Context.GetSynchronizationContext(1).Post(BusyFor, 30);
        EventWrittenEventArgs run = await listener.WaitForAsync(e => e.EventName == "ItemRun" && (int)e.Payload![0]! == id && (string)e.Payload[3]! == "InspectorEventsTests.BusyFor", "the busy item");
        run.Payload![2].Should().Be(1);
        ((double)run.Payload[4]!).Should().BeGreaterThanOrEqualTo(30, "the callback was made busy for 30 ms");
        ((double)run.Payload[5]!).Should().BeGreaterThanOrEqualTo(0, "posted while every item is observed: stamped with its enqueue time");
        run.Payload[7].Should().Be(0, "observed as one of every item, not as the period's sample");
        await listener.WaitForAsync(e => e.EventName == "LevelState" && (int)e.Payload![0]! == id && (int)e.Payload[1]! == 1 && (long)e.Payload[3]! >= 1, "level 1's counters");
    }

    [Fact]
    public async Task InspectorKeyword_ListenerGone_LeavesNoSlowPathNoStateAndNoSampler()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "left-alone", Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityScheduler observed = loop.Context;
        using (var listener = new Listener(Inspector))
        {
            await listener.WaitForAsync(e => e.EventName == "SchedulerState", "the sampler");
            InspectorSampler.IsOn.Should().BeTrue();
            observed.Inspection.Should().NotBeNull();
            loop.Context._slowPaths.Should().NotBe(SlowPaths.None);
        }

        InspectorSampler.IsOn.Should().BeFalse();
        observed.Inspection.Should().BeNull();
        loop.Context._slowPaths.Should().Be(SlowPaths.None);
    }

    [Fact]
    public async Task InspectorKeyword_BusyLoop_FallsBackToOneSamplePerPeriod()
    {
        string name = "busy-" + Guid.NewGuid().ToString("N");
        using var listener = new Listener(Inspector, new Dictionary<string, string?> { ["AllItemsBelow"] = "100", ["SamplePeriodMs"] = "10" });
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        EventWrittenEventArgs info = await listener.WaitForAsync(e => e.EventName == "SchedulerInfo" && (string)e.Payload![2]! == name, "the scheduler's info");
        int id = (int)info.Payload![1]!;

        // Far more than the budget of 100 x 10 ms = 1 item per period: the loop falls back to sampling, and its samples say so.
        using var stop = new CancellationTokenSource();
        Task flood = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                for (int i = 0; i < 1000; i++)
                {
                    loop.Context.GetSynchronizationContext(0).Post(static _ => { }, null);
                }

                await Task.Yield();
            }
        });
        try
        {
            await listener.WaitForAsync(e => e.EventName == "ItemRun" && (int)e.Payload![0]! == id && (int)e.Payload[7]! == 1, "a sampled item");
            await listener.WaitForAsync(e => e.EventName == "SchedulerState" && (int)e.Payload![0]! == id && (int)e.Payload[1]! == 0, "sampling reported");
        }
        finally
        {
            stop.Cancel();
            await flood.WithTimeout("the flood");
        }
    }

    [Fact]
    public async Task ThreadState_LoopStalledBeforeTheSession_NamesTheItemWithALowerBoundAndTheStall()
    {
        // The loop blocks in an item and a second item waits behind it; its watchdog reports the stall before anyone listens. A
        // session that starts then is told what the loop runs (from the loop's own record) and that the stall lasts.
        string name = "stalled-" + Guid.NewGuid().ToString("N");
        var timeout = TimeSpan.FromMilliseconds(40);
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2, StallTimeout = timeout });
        await using var disposeLoop = loop.BoundedDisposal();
        using var gate = new ManualResetEventSlim(false);
        var reported = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.StallDetected += (_, _) => reported.TrySetResult();
        try
        {
            loop.Context.GetSynchronizationContext(1).Post(BlockOn, gate);
            loop.Context.GetSynchronizationContext(0).Post(static _ => { }, null);
            await reported.Task.WithTimeout("the watchdog's report, with nobody listening");

            using var listener = new Listener(Inspector);
            EventWrittenEventArgs state = await listener.WaitForAsync(
                e => e.EventName == "ThreadState" && (int)e.Payload![3]! == 2 && (string)e.Payload[5]! == "InspectorEventsTests.BlockOn" && Id(listener, name) == (int)e.Payload[0]!,
                "the loop's state: blocked in the item");
            state.Version.Should().Be(1);
            ((int)state.Payload![4]!).Should().Be(1, "the item's level");
            ((int)state.Payload[7]!).Should().Be(0, "the item started before the session: its run time is a lower bound");
            ((double)state.Payload[6]!).Should().BeGreaterThanOrEqualTo(timeout.TotalMilliseconds, "the watchdog saw the loop on the item a stall timeout before it reported");
            ((double)state.Payload[8]!).Should().BeGreaterThanOrEqualTo(0, "the stall it reported lasts");
        }
        finally
        {
            gate.Set();
        }
    }

    [Fact]
    public async Task StallDetected_NoSessionSawTheItemStart_NamesItFromTheLoopsRecord()
    {
        string name = "stall-named-" + Guid.NewGuid().ToString("N");
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2, StallTimeout = TimeSpan.FromMilliseconds(40) });
        await using var disposeLoop = loop.BoundedDisposal();
        using var gate = new ManualResetEventSlim(false);
        using var listener = new Listener(EventKeywords.None, level: EventLevel.Warning); // the warnings only: no sampler observes the item
        try
        {
            loop.Context.GetSynchronizationContext(1).Post(BlockOn, gate);
            loop.Context.GetSynchronizationContext(0).Post(static _ => { }, null);
            EventWrittenEventArgs stall = await listener.WaitForAsync(e => e.EventName == "StallDetected" && (string)e.Payload![0]! == name, "the stall event");
            ((string)stall.Payload![6]!).Should().Be("InspectorEventsTests.BlockOn");
            ((double)stall.Payload[7]!).Should().Be(-1, "no session saw it start: how long it has run is not known exactly");
        }
        finally
        {
            gate.Set();
        }
    }

    private static int Id(Listener listener, string scheduler) =>
        listener.Find(e => e.EventName == "SchedulerInfo" && (string)e.Payload![2]! == scheduler) is { } info ? (int)info.Payload![1]! : -1;

    private static void BlockOn(object? gate) => ((ManualResetEventSlim)gate!).Wait();

    private static void BusyFor(object? milliseconds)
    {
        var clock = Stopwatch.StartNew();
        while (clock.ElapsedMilliseconds < (int)milliseconds!)
        {
            Thread.SpinWait(100);
        }
    }

    private sealed class Listener(EventKeywords keywords, IDictionary<string, string?>? arguments = null, EventLevel level = EventLevel.Informational) : EventListener
    {
        private readonly ConcurrentQueue<EventWrittenEventArgs> _events = new();
        private readonly SemaphoreSlim _written = new(0);

        public async Task<EventWrittenEventArgs> WaitForAsync(Func<EventWrittenEventArgs, bool> match, string what)
        {
            var clock = Stopwatch.StartNew();
            while (true)
            {
                if (_events.FirstOrDefault(match) is { } found)
                {
                    return found;
                }

                if (clock.Elapsed > TestTimeout.Unexpected)
                {
                    throw new TimeoutException($"No event for: {what} within {TestTimeout.Unexpected.TotalSeconds} s.");
                }

                await _written.WaitAsync(TimeSpan.FromMilliseconds(100));
            }
        }

        public EventWrittenEventArgs? Find(Func<EventWrittenEventArgs, bool> match) => _events.FirstOrDefault(match);

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "PriorityAsync")
            {
                EnableEvents(eventSource, level, keywords, arguments);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.EventSource.Name == "PriorityAsync")
            {
                _events.Enqueue(eventData);
                _written.Release();
            }
        }
    }
}
