using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Linq;

namespace LeaseWorker;

/// <summary>Parses the command line. Never throws for bad input: it returns a one-line error instead.</summary>
public static class CommandLine
{
    public const string Usage =
        """
        Usage: dotnet run --project samples/LeaseWorker -c Release -- [options]

        The seed's lease worker (a bus that leases messages, a worker that keeps each lease alive while it processes the
        message), run four ways side by side. Durations are in the seed's time (250ms, 1s, 1.5s) and all run scaled by
        --time-scale.

          --modes LIST        comma-separated: threadpool,single,seed-prioritize,priority (default: all four)
          --messages N        messages on the bus (default 12; the seed had 100)
          --steps N           processing steps per message, each a CPU part then an I/O part (default 10; the seed had 20)
          --cpu D             CPU part of a step (default 1s; the seed also ran 100ms)
          --io D              I/O part of a step (default 1s)
          --cpu-kind K        sleep (block the thread, as the seed) or spin (burn real CPU time) (default sleep)
          --checkpoint D|off  cut CPU parts into slices of D with a checkpoint between them (default off)
          --receive D         I/O of receiving a message (default 250ms)
          --refresh-delay D   time between lease refreshes (default 2s)
          --refresh D         I/O of a lease refresh, and of the final acknowledgement (default 250ms)
          --lease D           lease timeout (default 5s)
          --time-scale F      factor applied to every duration (default 0.1: 1 s runs as 100 ms)
          --starve-pool N     block N thread-pool threads forever before the measured runs, as a careless library
                              would at start-up (0 to 256, default 0)
          --format F          table or json (default table)
          --trace FILE        write PriorityAsync's dispatch trace of the priority run (Chrome trace JSON: Perfetto, chrome://tracing)
          --timeline FILE     write an SVG timeline, one lane per message, of every mode run, side by side
          --saturate D        instead of the modes: run the priority mode's levels for D under a bulk processing load that never
                              empties, and report the lowest level's worst wait under each policy
          --policy LIST       with --saturate: comma-separated strict,aging,shares (default: all three)
          -h, --help          this text

        Exit code: 0 when it ran (whatever was lost), 2 for bad arguments.

        """;

    public static readonly IReadOnlyList<string> AllModes = ["threadpool", "single", "seed-prioritize", "priority"];

    public static bool TryParse(IReadOnlyList<string> args, [NotNullWhen(true)] out Options? options, [NotNullWhen(false)] out string? error)
    {
        options = null;
        var settings = new Settings();
        IReadOnlyList<string> modes = AllModes;
        OutputFormat format = OutputFormat.Table;
        string? tracePath = null;
        string? timelinePath = null;
        TimeSpan? saturate = null;
        IReadOnlyList<string>? policies = null;

        for (int i = 0; i < args.Count; i++)
        {
            string name = args[i];
            if (name is "-h" or "--help" or "-?")
            {
                options = new Options(settings, modes, format, ShowHelp: true);
                error = null;
                return true;
            }

            // Both "--cpu 1s" and "--cpu=1s".
            string value;
            int equals = name.IndexOf('=', StringComparison.Ordinal);
            if (name.StartsWith("--", StringComparison.Ordinal) && equals > 0)
            {
                value = name[(equals + 1)..];
                name = name[..equals];
            }
            else if (i + 1 < args.Count)
            {
                value = args[++i];
            }
            else
            {
                error = KnownOptions.Contains(name) ? $"{name} needs a value (see --help)." : $"unknown option '{name}' (see --help).";
                return false;
            }

            if (!KnownOptions.Contains(name))
            {
                error = $"unknown option '{name}' (see --help).";
                return false;
            }

            string? problem = name switch
            {
                "--modes" => ParseModes(value, out modes),
                "--messages" => ParseInt(name, value, v => settings = settings with { Messages = v }),
                "--steps" => ParseInt(name, value, v => settings = settings with { Steps = v }),
                "--starve-pool" => ParseInt(name, value, v => settings = settings with { StarvePool = v }),
                "--cpu" => ParseDuration(name, value, v => settings = settings with { Cpu = v }),
                "--io" => ParseDuration(name, value, v => settings = settings with { Io = v }),
                "--receive" => ParseDuration(name, value, v => settings = settings with { Receive = v }),
                "--refresh-delay" => ParseDuration(name, value, v => settings = settings with { RefreshDelay = v }),
                "--refresh" => ParseDuration(name, value, v => settings = settings with { RefreshDuration = v }),
                "--lease" => ParseDuration(name, value, v => settings = settings with { LeaseTimeout = v }),
                "--checkpoint" => value.Equals("off", StringComparison.OrdinalIgnoreCase)
                    ? Set(() => settings = settings with { Checkpoint = null })
                    : ParseDuration(name, value, v => settings = settings with { Checkpoint = v }),
                "--cpu-kind" => value.ToLowerInvariant() switch
                {
                    "sleep" => Set(() => settings = settings with { CpuKind = CpuKind.Sleep }),
                    "spin" => Set(() => settings = settings with { CpuKind = CpuKind.Spin }),
                    _ => $"--cpu-kind must be sleep or spin (got '{value}').",
                },
                "--time-scale" => double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double scale)
                    ? Set(() => settings = settings with { TimeScale = scale })
                    : $"--time-scale must be a number such as 0.01 (got '{value}').",
                "--format" => value.ToLowerInvariant() switch
                {
                    "table" => Set(() => format = OutputFormat.Table),
                    "json" => Set(() => format = OutputFormat.Json),
                    _ => $"--format must be table or json (got '{value}').",
                },
                "--trace" => Set(() => tracePath = value),
                "--timeline" => Set(() => timelinePath = value),
                "--saturate" => ParseDuration(name, value, v => saturate = v),
                "--policy" => ParsePolicies(value, out policies),
                _ => $"unknown option '{name}' (see --help).",
            };

            if (problem is not null)
            {
                error = problem;
                return false;
            }
        }

        error = settings.Validate();
        if (error is not null)
        {
            return false;
        }

        if (tracePath is not null && !modes.Contains("priority"))
        {
            error = "--trace records the priority mode, which --modes leaves out.";
            return false;
        }

        if (saturate is { } saturation && saturation <= TimeSpan.Zero)
        {
            error = $"--saturate must be positive (got {Format.Duration(saturation)}).";
            return false;
        }

        if (policies is not null && saturate is null)
        {
            error = "--policy chooses the policies of the saturation experiment; add --saturate D.";
            return false;
        }

        options = new Options(settings, modes, format, ShowHelp: false, tracePath, timelinePath, saturate, policies);
        return true;
    }

    private static readonly HashSet<string> KnownOptions =
    [
        "--modes", "--messages", "--steps", "--cpu", "--io", "--receive", "--refresh-delay", "--refresh", "--lease",
        "--checkpoint", "--cpu-kind", "--time-scale", "--format", "--trace", "--timeline", "--starve-pool", "--saturate", "--policy",
    ];

    private static string? ParsePolicies(string value, out IReadOnlyList<string>? policies)
    {
        var list = new List<string>();
        foreach (string part in value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string policy = part.ToLowerInvariant();
            if (!Saturation.AllPolicies.Contains(policy))
            {
                policies = null;
                return $"unknown policy '{part}'; the policies are {string.Join(", ", Saturation.AllPolicies)}.";
            }

            if (!list.Contains(policy))
            {
                list.Add(policy);
            }
        }

        policies = list;
        return list.Count == 0 ? "--policy needs at least one policy." : null;
    }

    private static string? Set(Action apply)
    {
        apply();
        return null;
    }

    private static string? ParseModes(string value, out IReadOnlyList<string> modes)
    {
        var list = new List<string>();
        foreach (string part in value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string mode = part.ToLowerInvariant();
            if (!AllModes.Contains(mode))
            {
                modes = AllModes;
                return $"unknown mode '{part}'; the modes are {string.Join(", ", AllModes)}.";
            }

            if (!list.Contains(mode))
            {
                list.Add(mode);
            }
        }

        modes = list;
        return list.Count == 0 ? "--modes needs at least one mode." : null;
    }

    private static string? ParseInt(string name, string value, Action<int> apply)
    {
        if (!int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out int number))
        {
            return $"{name} must be a whole number (got '{value}').";
        }

        apply(number);
        return null;
    }

    private static string? ParseDuration(string name, string value, Action<TimeSpan> apply)
    {
        if (!Format.TryParseDuration(value, out TimeSpan duration))
        {
            return $"{name} must be a duration such as 250ms or 1.5s (got '{value}').";
        }

        apply(duration);
        return null;
    }
}
