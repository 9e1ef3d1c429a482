using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>
/// A fault no loop callback sees (a scope's child, an <c>InvokeAsync</c> task, a controller's <c>Run</c>) and a drop after the loop
/// ended are reported with the method's name on the <c>PriorityAsync</c> meter and event source: never silent, whoever awaits.
/// </summary>
[Collection(DiagnosticsCollection.Name)]
public sealed class WorkFaultReportTests
{
    [Fact]
    public async Task ChildFault_NobodyAwaitsIt_ReportedWithTheAsyncMethodsName()
    {
        string name = "faults-" + Guid.NewGuid().ToString("N");
        using var metrics = new MetricsCapture(name, "priorityasync.work.faulted");
        using var events = new FaultEvents(name);
        var thread = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 3 });
        await thread.Context.InvokeAsync(
            () =>
            {
                Priority.Start(token => KeepLeaseAsync(token), 2);
                return Task.CompletedTask;
            },
            0).WithTimeout("starting the child");
        thread.Complete();
        Func<Task> completion = () => thread.Completion.WithTimeout("the thread");
        await completion.Should().ThrowAsync<InvalidOperationException>();

        MetricsCapture.Recorded fault = metrics.Of("priorityasync.work.faulted").Should().ContainSingle().Subject;
        fault.Level.Should().Be(2);
        fault.Tags["priorityasync.work.kind"].Should().Be("TaskScope.Start");
        fault.Tags["priorityasync.method"].Should().Be("WorkFaultReportTests.KeepLeaseAsync");
        fault.Tags["error.type"].Should().Be(typeof(InvalidOperationException).FullName);
        EventWrittenEventArgs written = events.Of("WorkFaulted").Should().ContainSingle().Subject;
        written.Payload![3].Should().Be("WorkFaultReportTests.KeepLeaseAsync");
        written.Payload[5].Should().Be("lease lost");
    }

    [Fact]
    public async Task ChildCutOffByCancellation_NotReportedAsAFault()
    {
        string name = "cancelled-" + Guid.NewGuid().ToString("N");
        using var metrics = new MetricsCapture(name, "priorityasync.work.faulted");
        var thread = new PriorityContextThread(new PriorityContextOptions { Name = name });
        await using (thread.BoundedDisposal())
        {
            await thread.Context.InvokeAsync(
                () => TaskScope.RunAsync(async scope =>
                {
                    scope.Start(token => Priority.Delay(Timeout.InfiniteTimeSpan, token).AsTask());
                    await Priority.Yield();
                    scope.Cancel();
                }),
                0).WithTimeout("the scope");
        }

        metrics.Of("priorityasync.work.faulted").Should().BeEmpty();
    }

    [Fact]
    public async Task InvokeAsyncFault_ReportedEvenIfNobodyAwaitsTheTask()
    {
        string name = "invoke-" + Guid.NewGuid().ToString("N");
        using var metrics = new MetricsCapture(name, "priorityasync.work.faulted");
        var thread = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2 });
        await using (thread.BoundedDisposal())
        {
            _ = thread.Context.InvokeAsync(FailAsync, 1); // nobody awaits it
            await thread.Context.InvokeAsync(() => Task.CompletedTask, 0).WithTimeout("a marker behind it");
        }

        MetricsCapture.Recorded fault = metrics.Of("priorityasync.work.faulted").Should().ContainSingle().Subject;
        fault.Tags["priorityasync.work.kind"].Should().Be("InvokeAsync");
        fault.Tags["priorityasync.method"].Should().Be("WorkFaultReportTests.FailAsync");
        fault.Level.Should().Be(1);
    }

    [Fact]
    public async Task DropAfterTheLoopEnded_ReportedWithTheCallbacksName_OnTheMeterAndTheEventSource()
    {
        string name = "dropped-" + Guid.NewGuid().ToString("N");
        using var metrics = new MetricsCapture(name, "priorityasync.work_item.dropped");
        using var events = new FaultEvents(name);
        var thread = new PriorityContextThread(new PriorityContextOptions { Name = name, Levels = 2 });
        await thread.DisposeOrFailAsync();

        thread.Context.GetSynchronizationContext(1).Post(Late, null);

        MetricsCapture.Recorded drop = metrics.Of("priorityasync.work_item.dropped").Should().ContainSingle().Subject;
        drop.Tags["priorityasync.method"].Should().Be("WorkFaultReportTests.Late");
        drop.Tags["priorityasync.drop.reason"].Should().Be("posted_after_completion");
        EventWrittenEventArgs written = events.Of("WorkDropped").Should().ContainSingle().Subject;
        written.Payload![1].Should().Be(1);
        written.Payload[3].Should().Be("WorkFaultReportTests.Late");
    }

    private static async Task KeepLeaseAsync(CancellationToken token)
    {
        await Priority.Yield();
        token.ThrowIfCancellationRequested();
        throw new InvalidOperationException("lease lost");
    }

    private static async Task FailAsync()
    {
        await Priority.Yield();
        throw new FormatException("bad message");
    }

    private static void Late(object? state)
    {
    }

    private sealed class FaultEvents : EventListener
    {
        private readonly string _contextName;
        private readonly ConcurrentQueue<EventWrittenEventArgs> _events = new();

        public FaultEvents(string contextName)
        {
            _contextName = contextName;
            foreach (EventSource source in EventSource.GetSources())
            {
                OnEventSourceCreated(source);
            }
        }

        public List<EventWrittenEventArgs> Of(string eventName) => _events.Where(e => e.EventName == eventName).ToList();

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "PriorityAsync" && _contextName is not null)
            {
                EnableEvents(eventSource, EventLevel.Warning);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.Payload is { Count: > 0 } payload && payload[0] as string == _contextName)
            {
                _events.Enqueue(eventData);
            }
        }
    }
}
