using System;
using System.Collections.Generic;
using System.Globalization;

namespace PriorityAsync.Inspector;

/// <summary>The parsed command line (docs/inspector.md, "Usage").</summary>
internal sealed class CommandLine
{
    public const string Usage = """
        prio: the live inspector of PriorityAsync (docs/inspector.md)

          prio ps [--json]                      the .NET processes with a diagnostics port; PriorityAsync ones marked
          prio <pid|name> [options]             attach and show the live view (q or Ctrl+C: detach and quit)
          prio replay <file> [options]          show a recording (--once, --json), or export it (--chrome <out.json>)

        options:
          --once                 print one snapshot after --for seconds and detach
          --json                 with --once (or ps): JSON instead of text
          --for <seconds>        with --once: how long to watch first (default 2)
          --record <file>        keep the raw event stream (.nettrace) for `prio replay`
          --no-view              with --record: no live view; record until q, Ctrl+C or --duration
          --duration <seconds>   detach after this long
          --window <seconds>     what rates, percentiles and top callbacks cover (default 10)
          --sample <ms>          the target's sample period, 10 to 1000 (default 50)
          --every-item-below <n> observe every item of a scheduler below n items/s (default 20000; 0: always sample)
          --attach-timeout <s>   how long to wait for a first scheduler (default 5)
          --chrome <file>        with replay: write the Chrome trace format (Perfetto, chrome://tracing)
        exit codes: 0 done, 1 failure, 2 usage, 3 no such process, 4 no PriorityAsync scheduler, 5 port unavailable,
                    6 target exited while attached, 7 ambiguous name
        """;

    public string Command { get; private set; } = "inspect";

    public string? Target { get; private set; }

    public bool Once { get; private set; }

    public bool Json { get; private set; }

    public double ForSeconds { get; private set; } = 2;

    public string? RecordPath { get; private set; }

    public bool NoView { get; private set; }

    public double? DurationSeconds { get; private set; }

    public double WindowSeconds { get; private set; } = 10;

    public int SamplePeriodMs { get; private set; } = 50;

    public int AllItemsBelow { get; private set; } = 20_000;

    public double AttachTimeoutSeconds { get; private set; } = 5;

    public string? ChromePath { get; private set; }

    public bool Help { get; private set; }

    public bool Version { get; private set; }

    /// <exception cref="InspectorException">The arguments are wrong (exit code <see cref="ExitCodes.Usage"/>).</exception>
    public static CommandLine Parse(IReadOnlyList<string> args)
    {
        var line = new CommandLine();
        var positional = new List<string>();
        for (int i = 0; i < args.Count; i++)
        {
            string arg = args[i];
            switch (arg)
            {
                case "-h" or "--help" or "-?":
                    line.Help = true;
                    break;
                case "--version":
                    line.Version = true;
                    break;
                case "--once":
                    line.Once = true;
                    break;
                case "--json":
                    line.Json = true;
                    break;
                case "--no-view":
                    line.NoView = true;
                    break;
                case "--for":
                    line.ForSeconds = Number(args, ref i, 0, 3600);
                    break;
                case "--record":
                    line.RecordPath = Value(args, ref i);
                    break;
                case "--duration":
                    line.DurationSeconds = Number(args, ref i, 0.1, 86_400);
                    break;
                case "--window":
                    line.WindowSeconds = Number(args, ref i, 1, 3600);
                    break;
                case "--sample":
                    line.SamplePeriodMs = (int)Number(args, ref i, 10, 1000);
                    break;
                case "--every-item-below":
                    line.AllItemsBelow = (int)Number(args, ref i, 0, 1_000_000);
                    break;
                case "--attach-timeout":
                    line.AttachTimeoutSeconds = Number(args, ref i, 0.1, 600);
                    break;
                case "--chrome":
                    line.ChromePath = Value(args, ref i);
                    break;
                default:
                    if (arg.StartsWith('-'))
                    {
                        throw Bad($"unknown option '{arg}'");
                    }

                    positional.Add(arg);
                    break;
            }
        }

        if (line.Help || line.Version)
        {
            return line;
        }

        if (positional.Count > 0 && positional[0] is "ps" or "replay")
        {
            line.Command = positional[0];
            positional.RemoveAt(0);
        }

        switch (line.Command)
        {
            case "ps":
                if (positional.Count > 0)
                {
                    throw Bad($"ps takes no argument ('{positional[0]}')");
                }

                break;
            case "replay":
                if (positional.Count != 1)
                {
                    throw Bad("replay takes one recording file");
                }

                line.Target = positional[0];
                break;
            default:
                if (positional.Count == 0)
                {
                    line.Command = "ps"; // `prio` alone lists what it could attach to
                    break;
                }

                if (positional.Count > 1)
                {
                    throw Bad($"one process at a time ('{positional[0]}' and '{positional[1]}')");
                }

                line.Target = positional[0];
                break;
        }

        if (line.Json && !line.Once && line.Command != "ps")
        {
            throw Bad("--json needs --once (one snapshot), or goes with ps");
        }

        if (line.NoView && line.RecordPath is null)
        {
            throw Bad("--no-view goes with --record");
        }

        if (line.ChromePath is not null && line.Command != "replay")
        {
            throw Bad("--chrome goes with replay (record first with --record)");
        }

        return line;
    }

    private static string Value(IReadOnlyList<string> args, ref int i)
    {
        if (i + 1 >= args.Count)
        {
            throw Bad($"{args[i]} needs a value");
        }

        return args[++i];
    }

    private static double Number(IReadOnlyList<string> args, ref int i, double min, double max)
    {
        string name = args[i];
        string text = Value(args, ref i);
        if (!double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double value) || value < min || value > max)
        {
            throw Bad($"{name} takes a number from {min.ToString(CultureInfo.InvariantCulture)} to {max.ToString(CultureInfo.InvariantCulture)}, not '{text}'");
        }

        return value;
    }

    private static InspectorException Bad(string what) => new(ExitCodes.Usage, $"prio: {what}. See `prio --help`.");
}
