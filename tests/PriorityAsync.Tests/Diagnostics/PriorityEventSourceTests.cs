using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

[Collection(DiagnosticsCollection.Name)]
public sealed class PriorityEventSourceTests
{
    [Fact]
    public async Task WorkItemStartStop_ListenerEnabled_OnePairPerItemWithLevelAndMethod()
    {
        string name = "events-" + Guid.NewGuid().ToString("N");
        using var listener = new Listener(name);
        await Task.Run(() => PriorityContext.Run(
            () =>
            {
                for (int i = 0; i < 4; i++)
                {
                    PriorityContext.Current!.GetSynchronizationContext(1).Post(Step, null);
                }
            },
            new PriorityContextOptions { Name = name, Levels = 2 })).WithTimeout("the context");

        List<EventWrittenEventArgs> events = listener.Events.ToList();
        events.Select(e => e.EventName).Should().Equal(
            "WorkItemStart", "WorkItemStop",
            "WorkItemStart", "WorkItemStop",
            "WorkItemStart", "WorkItemStop",
            "WorkItemStart", "WorkItemStop",
            "WorkItemStart", "WorkItemStop");
        events.Skip(2).Where(e => e.EventName == "WorkItemStart")
            .Should().OnlyContain(e => (int)e.Payload![1]! == 1 && (string)e.Payload[2]! == "PriorityEventSourceTests.Step");
    }

    [Fact]
    public async Task EventSource_Disabled_SlowPathOff()
    {
        int paths = -1;
        await Task.Run(() => PriorityContext.Run(() => paths = PriorityContext.Current!._slowPaths)).WithTimeout("the context");
        PriorityEventSource.IsOn.Should().BeFalse();
        paths.Should().Be(SlowPaths.None);
    }

    private static void Step(object? state)
    {
    }

    private sealed class Listener(string contextName) : EventListener
    {
        public ConcurrentQueue<EventWrittenEventArgs> Events { get; } = new();

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "PriorityAsync")
            {
                EnableEvents(eventSource, EventLevel.Informational);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.Payload is { Count: > 0 } payload && (string?)payload[0] == contextName)
            {
                Events.Enqueue(eventData);
            }
        }
    }
}
