using System.Collections.Concurrent;
using System.Diagnostics;
using Microsoft.Extensions.Logging;
using OpenTelemetry;
using OpenTelemetry.Logs;
using OpenTelemetry.Trace;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Migration;

/// <summary>
/// A traced, logging worker as users write one, with the real OpenTelemetry SDK and Microsoft.Extensions.Logging: messages handled on
/// one loop by plain callbacks (posted from the message's own thread, and from the loop to itself) at different levels, one of them
/// leaving an <see cref="Activity"/> open. Each log line must carry its own message's trace id and logging scope, and a new message's
/// span must not become the child of another message's, on PriorityAsync as on AsyncEx's <c>AsyncContext</c>.
/// </summary>
[Collection(TracingCollection.Name)]
public sealed class TracingAndLoggingFlowTests
{
    private static readonly Action<ILogger, int, Exception?> s_handled =
        LoggerMessage.Define<int>(LogLevel.Information, new EventId(1, "Handled"), "message {Id} handled");

    public static TheoryData<string> BothLibraries => new() { "AsyncEx", "PriorityAsync" };

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task PlainCallbacks_TwoMessagesAtTwoLevels_EachLogLineCarriesItsOwnTraceAndScope(string name)
    {
        string sourceName = "PriorityAsync.Tests.Tracing." + Guid.NewGuid().ToString("N");
        using var source = new ActivitySource(sourceName);
        var spans = new List<Activity>();
        var lines = new ConcurrentQueue<LogLine>();
        using TracerProvider tracing = Sdk.CreateTracerProviderBuilder().AddSource(sourceName).AddInMemoryExporter(spans).Build()!;
        using ILoggerFactory loggerFactory = LoggerFactory.Create(logging => logging.AddOpenTelemetry(options =>
        {
            options.IncludeScopes = true;
            options.IncludeFormattedMessage = true;
            options.AddProcessor(new CapturingProcessor(lines));
        }));
        ILogger logger = loggerFactory.CreateLogger("worker");

        using Loop loop = Loop.Start(name);

        // Message 1 at the low level: received on its own thread, handled by a callback that posts a second one to the loop, and
        // that leaves an Activity open (a crash path, or a bug).
        ActivityTraceId trace1 = await HandleMessage(1, level: 0, leaveActivityOpen: true);

        // Message 2 at the high level, from another thread, after message 1's callbacks ran on the same loop thread.
        ActivityTraceId trace2 = await HandleMessage(2, level: 2, leaveActivityOpen: false);

        // Message 3 arrives with no trace at all: the span its callback starts must be a new root, not a child of message 1's leak.
        var message3 = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await Task.Run(() => loop.At(1).Post(
            _ =>
            {
                using Activity? span = source.StartActivity("message 3");
                s_handled(logger, 3, null);
                message3.SetResult();
            },
            null));
        await message3.Task.WithTimeout("message 3");
        tracing.ForceFlush().Should().BeTrue();

        trace1.Should().NotBe(trace2);
        lines.Where(line => line.Message == "message 1 handled").Should().HaveCount(2)
            .And.OnlyContain(line => line.TraceId == trace1 && line.Scopes.SequenceEqual(new[] { "message 1" }));
        lines.Where(line => line.Message == "message 2 handled").Should().HaveCount(2)
            .And.OnlyContain(line => line.TraceId == trace2 && line.Scopes.SequenceEqual(new[] { "message 2" }), "message 2's lines belong to message 2 alone");
        LogLine third = lines.Single(line => line.Message == "message 3 handled");
        third.Scopes.Should().BeEmpty();
        Activity span3 = spans.Single(span => span.DisplayName == "message 3");
        span3.ParentSpanId.Should().Be(default(ActivitySpanId), "message 3 came with no trace, so its span is a root");
        third.TraceId.Should().Be(span3.TraceId);
        spans.Where(span => span.DisplayName == "message 2").Should().ContainSingle()
            .Which.ParentSpanId.Should().Be(default(ActivitySpanId));

        async Task<ActivityTraceId> HandleMessage(int id, int level, bool leaveActivityOpen)
        {
            var handled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            ActivityTraceId trace = default;
            await Task.Run(async () =>
            {
                using Activity span = source.StartActivity($"message {id}")!;
                using IDisposable? scope = logger.BeginScope($"message {id}");
                trace = span.TraceId;
                loop.At(level).Post(
                    _ =>
                    {
                        s_handled(logger, id, null);
                        if (leaveActivityOpen)
                        {
                            _ = source.StartActivity($"message {id} left open"); // never stopped
                        }

                        // The second part of the handling, queued by the loop to itself.
                        SynchronizationContext.Current!.Post(
                            _ =>
                            {
                                s_handled(logger, id, null);
                                handled.SetResult();
                            },
                            null);
                    },
                    null);
                await handled.Task.WithTimeout($"message {id}");
            });
            return trace;
        }
    }

    private sealed record LogLine(string Message, ActivityTraceId TraceId, string[] Scopes);

    private sealed class CapturingProcessor(ConcurrentQueue<LogLine> lines) : BaseProcessor<LogRecord>
    {
        public override void OnEnd(LogRecord data)
        {
            var scopes = new List<string>();
            data.ForEachScope((scope, list) => list.Add(scope.Scope?.ToString() ?? string.Empty), scopes);
            lines.Enqueue(new LogLine(data.FormattedMessage ?? data.Body ?? string.Empty, data.TraceId, [.. scopes]));
        }
    }

    /// <summary>A loop of either library; <see cref="At"/> names the synchronization context of a level (AsyncEx has one level).</summary>
    private sealed class Loop : IDisposable
    {
        private readonly Func<int, SynchronizationContext> _at;
        private readonly IDisposable _owner;

        private Loop(Func<int, SynchronizationContext> at, IDisposable owner)
        {
            _at = at;
            _owner = owner;
        }

        public static Loop Start(string library)
        {
            if (library == "AsyncEx")
            {
                var thread = new Nito.AsyncEx.AsyncContextThread();
                return new Loop(_ => thread.Context.SynchronizationContext, thread);
            }

            var priority = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
            return new Loop(priority.Context.GetSynchronizationContext, priority.BoundedDisposal()); // its Dispose waits for the loop: bounded
        }

        public SynchronizationContext At(int level) => _at(level);

        public void Dispose() => _owner.Dispose();
    }
}

/// <summary>Activity listeners are process-wide: the tracing tests do not run beside each other.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class TracingCollection
{
    public const string Name = "Tracing";
}
