using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using Samples.Support;

namespace RabbitMqConsumers;

/// <summary>The sample's command line (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
public sealed record Settings
{
    private static readonly Settings s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "RabbitMQ consumers at priority levels, side by side on a real broker: the start latency of an urgent message (priority 9) " +
        "published while each consumer's prefetch is full of CPU-bound messages (priority 0), for each prefetch count; or, with " +
        "--throughput, messages per second. The broker: --connection or PRIORITYASYNC_RABBITMQ (eval \"$(tests/rabbitmq/start.sh)\"). " +
        "Exit code 2 for bad arguments or a broker that cannot be reached.");

    private static readonly Option<string?> s_connection = s_line.Add(SampleCommandLine.Text("--connection", "URI", "the broker, amqp://user:password@host:port/ (default: PRIORITYASYNC_RABBITMQ)"));
    private static readonly Option<IReadOnlyList<int>> s_prefetch = s_line.Add(SampleCommandLine.WholeNumbers("--prefetch", s_defaults.Prefetch, 1, 2000, "prefetch counts to measure"));
    private static readonly Option<IReadOnlyList<string>> s_consumers = s_line.Add(SampleCommandLine.List("--consumers", ConsumerUnderTest.Kinds, ConsumerUnderTest.Kinds, "consumer", "consumers to run"));
    private static readonly Option<TimeSpan?> s_work = s_line.Add(SampleCommandLine.Duration("--work", s_defaults.Work, "CPU work per message"));
    private static readonly Option<int> s_trials = s_line.Add(SampleCommandLine.WholeNumber("--trials", s_defaults.Trials, "urgent messages measured per prefetch count and consumer"));
    private static readonly Option<bool> s_throughput = s_line.Add(new Option<bool>("--throughput") { Description = "measure messages per second instead (plain consumer vs priority loop)" });
    private static readonly Option<string?> s_drain = s_line.Add(SampleCommandLine.Text("--drain", "QUEUE", "run as a worker: consume QUEUE (durable) on a priority loop until it is empty, one line per message"));
    private static readonly Option<int> s_messages = s_line.Add(SampleCommandLine.WholeNumber("--messages", s_defaults.Messages, "messages per round of --throughput"));

    public string? Connection { get; init; }

    public IReadOnlyList<int> Prefetch { get; init; } = [1, 10, 50, 250];

    public IReadOnlyList<string> Consumers { get; init; } = ConsumerUnderTest.Kinds;

    public TimeSpan Work { get; init; } = TimeSpan.FromMilliseconds(10);

    public int Trials { get; init; } = 3;

    public bool Throughput { get; init; }

    public int Messages { get; init; } = 20_000;

    public string? Drain { get; init; }

    /// <summary>--help or --version: the text to print, then exit 0; null: run.</summary>
    public string? Show { get; init; }

    public static bool TryParse(IReadOnlyList<string> args, [NotNullWhen(true)] out Settings? settings, [NotNullWhen(false)] out string? error)
    {
        settings = null;
        if (!s_line.TryParse(args, out ParseResult result, out string? show, out error))
        {
            return false;
        }

        var parsed = new Settings
        {
            Connection = result.GetValue(s_connection) ?? Environment.GetEnvironmentVariable("PRIORITYASYNC_RABBITMQ"),
            Prefetch = SampleCommandLine.GetList(result, s_prefetch),
            Consumers = SampleCommandLine.GetList(result, s_consumers),
            Work = SampleCommandLine.GetDuration(result, s_work)!.Value,
            Trials = result.GetValue(s_trials),
            Throughput = result.GetValue(s_throughput),
            Messages = result.GetValue(s_messages),
            Drain = result.GetValue(s_drain),
            Show = show,
        };
        error = parsed switch
        {
            { Show: null, Connection: null or "" } => "the broker is needed: --connection or the PRIORITYASYNC_RABBITMQ environment variable (eval \"$(tests/rabbitmq/start.sh)\").",
            { Trials: < 1 or > 100 } => $"--trials must be from 1 to 100 (got {parsed.Trials}).",
            { Messages: < 1 or > 1_000_000 } => $"--messages must be from 1 to 1000000 (got {parsed.Messages}).",
            { Work.Ticks: < 0 } or { Work.TotalSeconds: > 1 } => "--work must be from 0 to 1s.",
            _ => null,
        };
        if (error is not null)
        {
            return false;
        }

        settings = parsed;
        return true;
    }
}
