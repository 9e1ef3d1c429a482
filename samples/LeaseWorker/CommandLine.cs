using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using System.Linq;
using LeaseWorker.Core;
using Samples.Support;

namespace LeaseWorker;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
public static class CommandLine
{
    /// <summary>The modes of a run without <c>--modes</c>: the seed's experiment, on one thread or the .NET thread pool.</summary>
    public static readonly IReadOnlyList<string> AllModes = ["threadpool", "single", "seed-prioritize", "priority"];

    /// <summary>Every mode <c>--modes</c> accepts: the default ones and <c>priority-threads</c> (PriorityAsync on one thread per core).</summary>
    public static readonly IReadOnlyList<string> KnownModes = [.. AllModes, PriorityThreadsMode.ModeName];

    /// <summary>The modes of a run with <c>--virtual-time</c>: those on one loop, which can tell when the run has nothing to do.</summary>
    public static readonly IReadOnlyList<string> VirtualTimeModes = ["single", "seed-prioritize", "priority"];

    /// <summary>Says which modes run on virtual time, for messages.</summary>
    public const string VirtualTimeModesText =
        "--virtual-time runs the modes on one thread (single, seed-prioritize, priority); the thread pool's and a PriorityThreadPool's " +
        "threads cannot tell when the whole run is idle, so they run in real time only.";

    private static readonly Settings s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "The lease-worker experiment of the article \"Async Wandering, part 15\": a bus leases messages to a worker, which keeps " +
        "each lease alive while it processes the message; run four ways side by side. Durations are the article's (CPU part 1s, " +
        "lease 5s, ...), every one run scaled by --time-scale. Exit code: 0 when it ran (whatever was lost), 2 for bad arguments.");

    private static readonly Option<IReadOnlyList<string>> s_modes = s_line.Add(SampleCommandLine.List(
        "--modes", KnownModes, AllModes, "mode", "comma-separated: the modes to run (priority-threads: PriorityAsync on one thread per core)"));
    private static readonly Option<int> s_messages = s_line.Add(SampleCommandLine.WholeNumber("--messages", s_defaults.Messages, "messages on the bus (the article had 100)"));
    private static readonly Option<int> s_steps = s_line.Add(SampleCommandLine.WholeNumber("--steps", s_defaults.Steps, "processing steps per message, each a CPU part then an I/O part (the article had 20)"));
    private static readonly Option<TimeSpan?> s_cpu = s_line.Add(SampleCommandLine.Duration("--cpu", s_defaults.Cpu, "CPU part of a step (the article also ran 100ms)"));
    private static readonly Option<TimeSpan?> s_io = s_line.Add(SampleCommandLine.Duration("--io", s_defaults.Io, "I/O part of a step"));
    private static readonly Option<string> s_cpuKind = s_line.Add(SampleCommandLine.Choice("--cpu-kind", "sleep", "sleep (block the thread, as the article) or spin (burn real CPU time)", "sleep", "spin"));
    private static readonly Option<TimeSpan?> s_checkpoint = s_line.Add(SampleCommandLine.Duration("--checkpoint", null, "cut CPU parts into slices of D with a checkpoint between them (default off)", offAllowed: true));
    private static readonly Option<TimeSpan?> s_receive = s_line.Add(SampleCommandLine.Duration("--receive", s_defaults.Receive, "I/O of receiving a message"));
    private static readonly Option<TimeSpan?> s_refreshDelay = s_line.Add(SampleCommandLine.Duration("--refresh-delay", s_defaults.RefreshDelay, "time between lease refreshes"));
    private static readonly Option<TimeSpan?> s_refresh = s_line.Add(SampleCommandLine.Duration("--refresh", s_defaults.RefreshDuration, "I/O of a lease refresh, and of the final acknowledgement"));
    private static readonly Option<TimeSpan?> s_lease = s_line.Add(SampleCommandLine.Duration("--lease", s_defaults.LeaseTimeout, "lease timeout"));
    private static readonly Option<double> s_timeScale = s_line.Add(SampleCommandLine.Number("--time-scale", s_defaults.TimeScale, "factor applied to every duration, above 0 and at most 10 (0.1: 1s runs as 100ms)"));
    private static readonly Option<int> s_starvePool = s_line.Add(SampleCommandLine.WholeNumber("--starve-pool", 0, $"block N thread-pool threads forever before the measured runs, as a careless library would at start-up (0 to {Settings.MaxStarvePool})"));
    private static readonly Option<bool> s_virtualTime = s_line.Add(SampleCommandLine.Flag("--virtual-time",
        "run each mode on a virtual clock: CPU parts advance it, every wait is a timer on it, and the loop jumps it when idle; exact, " +
        "the same at any load, in milliseconds; the article's durations unscaled unless --time-scale is given; single-thread modes only"));
    private static readonly Option<bool> s_json = s_line.Add(SampleCommandLine.Flag("--json", "every measurement as JSON (durations in seconds), for a script, instead of the table"));
    private static readonly Option<bool> s_wide = s_line.Add(SampleCommandLine.Flag("--wide", "the full table: every column and the bystander notes (about 180 columns; the default fits 120)"));
    private static readonly Option<string?> s_trace = s_line.Add(SampleCommandLine.OutputFile("--trace", "FILE", "write PriorityAsync's dispatch trace of the priority run (Chrome trace JSON: Perfetto, chrome://tracing)"));
    private static readonly Option<string?> s_timeline = s_line.Add(SampleCommandLine.OutputFile("--timeline", "FILE", "write an SVG timeline, one lane per message, of every mode run, side by side"));

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print; the options are then the defaults).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out Options options, out string? show, [NotNullWhen(false)] out string? error) =>
        s_line.TryParse(args, new Options(s_defaults, AllModes), Read, Validate, out options, out show, out error);

    private static Options Read(ParseResult result)
    {
        bool virtualTime = result.GetValue(s_virtualTime);
        var settings = new Settings
        {
            Messages = result.GetValue(s_messages),
            Steps = result.GetValue(s_steps),
            Cpu = SampleCommandLine.GetDuration(result, s_cpu)!.Value,
            Io = SampleCommandLine.GetDuration(result, s_io)!.Value,
            CpuKind = result.GetValue(s_cpuKind) == "spin" ? CpuKind.Spin : CpuKind.Sleep,
            Checkpoint = SampleCommandLine.GetDuration(result, s_checkpoint),
            Receive = SampleCommandLine.GetDuration(result, s_receive)!.Value,
            RefreshDelay = SampleCommandLine.GetDuration(result, s_refreshDelay)!.Value,
            RefreshDuration = SampleCommandLine.GetDuration(result, s_refresh)!.Value,
            LeaseTimeout = SampleCommandLine.GetDuration(result, s_lease)!.Value,
            // Virtual time costs nothing per second: the article's durations as they are, unless --time-scale says otherwise.
            TimeScale = virtualTime && !Given(result, s_timeScale) ? 1 : result.GetValue(s_timeScale),
            StarvePool = result.GetValue(s_starvePool),
            VirtualTime = virtualTime,
        };
        IReadOnlyList<string> modes = virtualTime && !Given(result, s_modes) ? VirtualTimeModes : SampleCommandLine.GetList(result, s_modes);
        return new Options(settings, modes, result.GetValue(s_json), result.GetValue(s_wide), result.GetValue(s_trace), result.GetValue(s_timeline));
    }

    private static string? Validate(Options options)
    {
        if (options.Settings.VirtualTime && options.Modes.FirstOrDefault(m => !VirtualTimeModes.Contains(m)) is { } realOnly)
        {
            return $"--modes {realOnly} cannot run with --virtual-time: {VirtualTimeModesText}";
        }

        if (options.Settings.Validate() is { } error)
        {
            return error;
        }

        return options.TracePath is not null && !options.Modes.Contains("priority")
            ? "--trace records the priority mode, which --modes leaves out."
            : null;
    }

    /// <summary>Whether the command line gave <paramref name="option"/> (not its default).</summary>
    private static bool Given(ParseResult result, Option option) => result.GetResult(option) is { Implicit: false };
}
