using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using Samples.Support;

namespace HostedWorker;

/// <summary>The sample's command line, on System.CommandLine (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
public sealed class WorkerSettings
{
    private static readonly WorkerSettings s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "A priority lease worker as a .NET hosted worker, on an in-memory bus: Ctrl+C or SIGTERM drains it (the messages in flight " +
        "are abandoned, nothing is lost) and it exits 0, printing the bus's counts as one JSON line. Exit code 2 for bad arguments.");

    private static readonly Option<int> s_messages = s_line.Add(SampleCommandLine.WholeNumber("--messages", s_defaults.Messages, "messages on the bus"));
    private static readonly Option<TimeSpan?> s_work = s_line.Add(SampleCommandLine.Duration("--work", s_defaults.Work, "CPU work per message"));
    private static readonly Option<TimeSpan?> s_checkpoint = s_line.Add(SampleCommandLine.Duration("--checkpoint", s_defaults.Checkpoint, "slice of the CPU work between two checkpoints"));
    private static readonly Option<int> s_concurrency = s_line.Add(SampleCommandLine.WholeNumber("--concurrency", s_defaults.Concurrency, "messages in flight"));
    private static readonly Option<TimeSpan?> s_lease = s_line.Add(SampleCommandLine.Duration("--lease", s_defaults.LeaseDuration, "lease length"));
    private static readonly Option<TimeSpan?> s_renewEvery = s_line.Add(SampleCommandLine.Duration("--renew-every", s_defaults.RenewInterval, "renewal interval"));
    private static readonly Option<TimeSpan?> s_latency = s_line.Add(SampleCommandLine.Duration("--latency", s_defaults.Latency, "the bus's reply time per call"));
    private static readonly Option<int> s_progressEvery = s_line.Add(SampleCommandLine.WholeNumber("--progress-every", s_defaults.ProgressEvery, "log progress every N completed messages"));

    public int Messages { get; private init; } = 200;

    public TimeSpan Work { get; private init; } = TimeSpan.FromMilliseconds(40);

    public TimeSpan Checkpoint { get; private init; } = TimeSpan.FromMilliseconds(5);

    public int Concurrency { get; private init; } = 4;

    public TimeSpan LeaseDuration { get; private init; } = TimeSpan.FromSeconds(2);

    public TimeSpan RenewInterval { get; private init; } = TimeSpan.FromMilliseconds(500);

    public TimeSpan Latency { get; private init; } = TimeSpan.FromMilliseconds(2);

    public int ProgressEvery { get; private init; } = 50;

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print; the settings are then the defaults).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out WorkerSettings settings, out string? show, [NotNullWhen(false)] out string? error) =>
        s_line.TryParse(args, s_defaults, Read, Validate, out settings, out show, out error);

    private static WorkerSettings Read(ParseResult result) => new()
    {
        Messages = result.GetValue(s_messages),
        Work = SampleCommandLine.GetDuration(result, s_work)!.Value,
        Checkpoint = SampleCommandLine.GetDuration(result, s_checkpoint)!.Value,
        Concurrency = result.GetValue(s_concurrency),
        LeaseDuration = SampleCommandLine.GetDuration(result, s_lease)!.Value,
        RenewInterval = SampleCommandLine.GetDuration(result, s_renewEvery)!.Value,
        Latency = SampleCommandLine.GetDuration(result, s_latency)!.Value,
        ProgressEvery = result.GetValue(s_progressEvery),
    };

    private static string? Validate(WorkerSettings parsed) => parsed switch
    {
        { Messages: < 0 or > 1_000_000 } => $"--messages must be from 0 to 1000000 (got {parsed.Messages}).",
        { Concurrency: < 1 or > 1000 } => $"--concurrency must be from 1 to 1000 (got {parsed.Concurrency}).",
        { Work.Ticks: < 0 } => "--work must not be negative.",
        { Latency.Ticks: < 0 } => "--latency must not be negative.",
        { Checkpoint.TotalMilliseconds: < 1 } => $"--checkpoint must be at least 1ms (got {parsed.Checkpoint.TotalMilliseconds} ms).",
        { RenewInterval.TotalMilliseconds: < 1 } => $"--renew-every must be at least 1ms (got {parsed.RenewInterval.TotalMilliseconds} ms).",
        { ProgressEvery: < 1 } => $"--progress-every must be at least 1 (got {parsed.ProgressEvery}).",
        _ when parsed.LeaseDuration <= parsed.RenewInterval + parsed.Latency =>
            $"--lease ({parsed.LeaseDuration.TotalMilliseconds} ms) must be longer than --renew-every plus --latency ({(parsed.RenewInterval + parsed.Latency).TotalMilliseconds} ms).",
        _ => null,
    };
}
