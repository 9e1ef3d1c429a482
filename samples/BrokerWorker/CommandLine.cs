using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Linq;
using BrokerWorker.Bus;
using Samples.Support;

namespace BrokerWorker;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport), into <see cref="Options"/>; every problem is one line for the user.</summary>
public static class CommandLine
{
    private static readonly Options s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "The lease worker of the article \"Async Wandering, part 15\" against a broker (in memory, or a real " +
        $"{string.Join(", ", BusFactory.Kinds[..^1].Select(k => k.Name))} or {BusFactory.Kinds[^1].Name} queue), in one or several worker processes, five modes side by side. " +
        "Durations are the article's, every one run scaled by --time-scale. Exit code: 0 when it ran (whatever was lost), 2 for bad " +
        "arguments or a broker that cannot be used.");

    private static readonly Option<string> s_bus = s_line.Add(SampleCommandLine.Choice("--bus", s_defaults.Bus, "the broker: memory (in this process), or a real server", Options.Buses));
    private static readonly Option<string?> s_connection = s_line.Add(SampleCommandLine.Text("--connection", "STRING",
        $"the broker's connection string (its client's; default: the bus's {string.Join(", ", BusFactory.Kinds.Select(k => k.Variable))})"));
    private static readonly Option<IReadOnlyList<string>> s_modes = s_line.Add(
        SampleCommandLine.List("--modes", Options.AllModes, Options.AllModes, "mode", "comma-separated: the modes to run, one after another"));
    private static readonly Option<int> s_workers = s_line.Add(SampleCommandLine.WholeNumber("--workers", s_defaults.Workers, "worker processes against one queue (memory: N workers in this process)"));
    private static readonly Option<int> s_messages = s_line.Add(SampleCommandLine.WholeNumber("--messages", s_defaults.Messages, "messages the producer puts on the queue first"));
    private static readonly Option<int> s_steps = s_line.Add(SampleCommandLine.WholeNumber("--steps", s_defaults.Steps, "steps per message (CPU then I/O)"));
    private static readonly Option<int> s_concurrency = s_line.Add(SampleCommandLine.WholeNumber("--concurrency", s_defaults.Concurrency, "messages in flight per worker"));
    private static readonly Option<TimeSpan?> s_cpu = s_line.Add(SampleCommandLine.Duration("--cpu", s_defaults.Cpu, "one step's CPU part, in the article's time"));
    private static readonly Option<TimeSpan?> s_io = s_line.Add(SampleCommandLine.Duration("--io", s_defaults.Io, "one step's I/O part, in the article's time"));
    private static readonly Option<TimeSpan?> s_checkpoint = s_line.Add(SampleCommandLine.Duration("--checkpoint", null, "cut CPU parts into slices of D with a checkpoint between them (default off)", offAllowed: true));
    private static readonly Option<TimeSpan?> s_renewEvery = s_line.Add(SampleCommandLine.Duration("--renew-every", s_defaults.RenewEvery, "renewal interval"));
    private static readonly Option<TimeSpan?> s_lease = s_line.Add(SampleCommandLine.Duration("--lease", s_defaults.Lease, "lease length"));
    private static readonly Option<double> s_timeScale = s_line.Add(SampleCommandLine.Number("--time-scale", s_defaults.TimeScale, "run every duration of the article times X"));
    private static readonly Option<int> s_hangMessage = s_line.Add(SampleCommandLine.WholeNumber("--hang-message", 0, "message K's first delivery never finishes processing (0: none)"));
    private static readonly Option<TimeSpan?> s_stallAfter = s_line.Add(SampleCommandLine.Duration("--stall-after", null, "end a run with nothing completed or delivered for D (default: 3 times the slowest message, at least 8 leases)"));
    private static readonly Option<bool> s_virtualTime = s_line.Add(SampleCommandLine.Flag("--virtual-time",
        "run priority and single on a virtual clock, in memory: exact at any load, in milliseconds (time scale 1 unless given)"));
    private static readonly Option<bool> s_busCost = s_line.Add(SampleCommandLine.Flag("--bus-cost", "receive+renew+complete per second with no work: the sample's bus against a plain client loop"));
    private static readonly Option<bool> s_json = s_line.Add(SampleCommandLine.Flag("--json", "one JSON line per run (every measurement) instead of the table"));
    private static readonly Option<bool> s_wide = s_line.Add(SampleCommandLine.Flag("--wide", "the full table: every column (about 200 columns; the default fits 120)"));

    /// <summary>False with one line in <paramref name="error"/> for bad input; true with <see cref="Options.Show"/> set for --help or --version.</summary>
    public static bool TryParse(IReadOnlyList<string> args, out Options options, out string? error)
    {
        bool parsed = s_line.TryParse(args, s_defaults, Read, o => o.Validate(), out options, out string? show, out error);
        options = show is null ? options : s_defaults with { Show = show };
        return parsed;
    }

    private static Options Read(ParseResult result)
    {
        bool virtualTime = result.GetValue(s_virtualTime);
        return new Options
        {
            Bus = result.GetValue(s_bus)!,
            Connection = result.GetValue(s_connection),
            // Virtual time runs the modes it can when none are named; a mode it cannot run is refused by Validate.
            Modes = virtualTime && !Given(result, s_modes) ? Options.VirtualTimeModes : SampleCommandLine.GetList(result, s_modes),
            Workers = result.GetValue(s_workers),
            Messages = result.GetValue(s_messages),
            Steps = result.GetValue(s_steps),
            Concurrency = result.GetValue(s_concurrency),
            Cpu = SampleCommandLine.GetDuration(result, s_cpu)!.Value,
            Io = SampleCommandLine.GetDuration(result, s_io)!.Value,
            Checkpoint = SampleCommandLine.GetDuration(result, s_checkpoint),
            RenewEvery = SampleCommandLine.GetDuration(result, s_renewEvery)!.Value,
            Lease = SampleCommandLine.GetDuration(result, s_lease)!.Value,
            // Virtual time costs nothing per second: the article's durations as they are, unless --time-scale says otherwise.
            TimeScale = virtualTime && !Given(result, s_timeScale) ? 1 : result.GetValue(s_timeScale),
            HangMessage = result.GetValue(s_hangMessage),
            StallAfter = SampleCommandLine.GetDuration(result, s_stallAfter),
            BusCost = result.GetValue(s_busCost),
            Json = result.GetValue(s_json),
            VirtualTime = virtualTime,
            Wide = result.GetValue(s_wide),
        };
    }

    private static bool Given(ParseResult result, Option option) => result.GetResult(option) is { Implicit: false };
}
