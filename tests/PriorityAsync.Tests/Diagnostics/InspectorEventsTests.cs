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

    private static void BusyFor(object? milliseconds)
    {
        var clock = Stopwatch.StartNew();
        while (clock.ElapsedMilliseconds < (int)milliseconds!)
        {
            Thread.SpinWait(100);
        }
    }

    private sealed class Listener(EventKeywords keywords, IDictionary<string, string?>? arguments = null) : EventListener
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

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "PriorityAsync")
            {
                EnableEvents(eventSource, EventLevel.Informational, keywords, arguments);
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
