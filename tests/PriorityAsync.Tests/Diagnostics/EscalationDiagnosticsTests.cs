using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.IO;
using System.Text.Json;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>[X-SEEN]: an escalation is seen on the event source (who raised whom, from which level to which, for how long), the meter
/// and the trace recorder; a lock waiter that waits its stall timeout is reported, saying whether the holder could be raised.</summary>
[Collection(DiagnosticsCollection.Name)]
public sealed class EscalationDiagnosticsTests
{
    [Fact]
    public async Task Join_Escalation_IsReportedOnTheEventSourceTheMeterAndTheTrace()
    {
        string name = "escalation-" + Guid.NewGuid().ToString("N");
        using var events = new Listener(name);
        using var metrics = new MetricsCapture(name, "priorityasync.escalations", "priorityasync.escalation.duration");
        using PriorityTraceRecorder recorder = PriorityTraceRecorder.Start(capacity: 10_000);
        await Task.Run(() => PriorityContext.Run(
            async () =>
            {
                await Prioritize(3);
                PriorityContext.Current!.GetSynchronizationContext(2).Post(_ => { }, null);
                await PriorityContext.Current!.InvokeAsync(KeepLeaseAsync, level: 0);
            },
            new PriorityContextOptions { Name = name, Levels = 4 })).WithTimeout("the context");
        recorder.Stop();

        EventWrittenEventArgs started = events.Events.Should().ContainSingle(e => e.EventName == "EscalationStarted").Which;
        ((string)started.Payload![1]!).Should().Be("InvokeAsync EscalationDiagnosticsTests.KeepLeaseAsync");
        started.Payload[2].Should().Be(0);
        started.Payload[3].Should().Be(3);
        started.Payload[4].Should().Be("join");
        ((string)started.Payload[5]!).Should().Be("code at level 3");
        EventWrittenEventArgs ended = events.Events.Should().ContainSingle(e => e.EventName == "EscalationEnded").Which;
        ended.Payload![3].Should().Be(3);
        ((double)ended.Payload[4]!).Should().BeGreaterThanOrEqualTo(0);

        metrics.Of("priorityasync.escalations").Should().ContainSingle().Which.Tags.Should()
            .Contain("priorityasync.level", 3).And.Contain("priorityasync.escalation.from_level", 0).And.Contain("priorityasync.escalation.cause", "join");
        metrics.Of("priorityasync.escalation.duration").Should().ContainSingle();

        using var trace = new MemoryStream();
        recorder.WriteChromeTrace(trace);
        using JsonDocument document = JsonDocument.Parse(trace.ToArray());
        JsonElement slice = document.RootElement.GetProperty("traceEvents").EnumerateArray()
            .Should().ContainSingle(e => e.GetProperty("ph").GetString() == "X" && e.GetProperty("cat").GetString() == "escalation").Which;
        slice.GetProperty("name").GetString().Should().Be("InvokeAsync EscalationDiagnosticsTests.KeepLeaseAsync: level 0 raised to 3");
        document.RootElement.GetProperty("traceEvents").EnumerateArray()
            .Where(e => e.GetProperty("ph").GetString() == "M" && e.GetProperty("name").GetString() == "thread_name")
            .Select(e => e.GetProperty("args").GetProperty("name").GetString())
            .Should().Contain($"{name} / escalations");
    }

    [Fact]
    public async Task LongLockWait_HolderOffTheScheduler_IsReportedAsNotRaised_AtTheStallTimeoutOfTheWaitersClock()
    {
        string name = "lockwait-" + Guid.NewGuid().ToString("N");
        using var events = new Listener(name);
        var clock = new VirtualTimeProvider();
        var lk = new PriorityLock { Name = "client" };
        PriorityLock.Releaser holding = await lk.LockAsync(); // held by this thread: off the scheduler, nothing can raise it
        PriorityContext.Run(
            async () =>
            {
                Start(async stop =>
                {
                    await Delay(TimeSpan.FromSeconds(3), stop); // past the stall timeout: the report comes first
                    holding.Dispose();
                });
                await Prioritize(1);
                using (await lk.LockAsync())
                {
                }
            },
            new PriorityContextOptions { Name = name, Levels = 2, TimeProvider = clock, StallTimeout = TimeSpan.FromSeconds(2) });

        EventWrittenEventArgs report = events.Events.Should().ContainSingle(e => e.EventName == "LockWaitLong").Which;
        report.Payload![1].Should().Be(1);
        report.Payload[2].Should().Be("the PriorityLock 'client'");
        report.Payload[4].Should().Be("code off every priority scheduler");
        report.Payload[5].Should().Be(0);
    }

    [Fact]
    public void LongLockWait_HolderRaisedButStillHolding_IsReportedAsRaised()
    {
        string name = "lockwait-raised-" + Guid.NewGuid().ToString("N");
        using var events = new Listener(name);
        var clock = new VirtualTimeProvider();
        var lk = new PriorityLock { Name = "client" };
        PriorityContext.Run(
            async () =>
            {
                var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                Start(
                    async stop =>
                    {
                        using (await lk.LockAsync(stop))
                        {
                            holding.SetResult();
                            await Delay(TimeSpan.FromSeconds(3), stop); // a long critical section: raising it cannot shorten it
                        }
                    },
                    level: 0);
                await holding.Task;
                await Prioritize(1);
                using (await lk.LockAsync())
                {
                }
            },
            new PriorityContextOptions { Name = name, Levels = 2, TimeProvider = clock, StallTimeout = TimeSpan.FromSeconds(2) });

        EventWrittenEventArgs report = events.Events.Should().ContainSingle(e => e.EventName == "LockWaitLong").Which;
        report.Payload![4].Should().Be($"code at level 0 of the PriorityContext '{name}'");
        report.Payload[5].Should().Be(1);
        events.Events.Should().Contain(e => e.EventName == "EscalationStarted" && (string)e.Payload![4]! == "lock");
    }

    private static async Task KeepLeaseAsync() => await Yield();

    private sealed class Listener : EventListener
    {
        private readonly string _contextName;

        public Listener(string contextName) => _contextName = contextName; // the base constructor enables the source

        public ConcurrentQueue<EventWrittenEventArgs> Events { get; } = new();

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "PriorityAsync")
            {
                EnableEvents(eventSource, EventLevel.Informational, (EventKeywords)0x4); // a keyword no event has: the unkeyworded ones only
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.Payload is { Count: > 0 } payload && (string?)payload[0] == _contextName)
            {
                Events.Enqueue(eventData);
            }
        }
    }
}
