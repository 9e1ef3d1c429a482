using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace SyncOverAsync;

/// <summary>Parses the command line. Never throws for bad input: it returns a one-line error instead.</summary>
internal static class CommandLine
{
    public const string Usage =
        """
        Usage: dotnet run --project samples/SyncOverAsync -c Release -- [options]

        Task.Wait() against await. 1: the seed's thread-pool experiment scaled to seconds (requests served with Wait and with
        await). 2: the same handler on a PriorityContextThread with StallTimeout set: the blocked loop is reported. 3: what
        Wait, await and PriorityContext.Run throw when the call fails.

          --parts LIST          pool,loop,exceptions (default: all three)
          --duration D          how long requests arrive in part 1 (default 3s; the seed ran 60s)
          --interval D          time between requests in part 1 (default 2ms, as the seed)
          --latency D           the backend call's round trip (default 100ms; the seed's was about 900ms)
          --stall-timeout D     PriorityContextOptions.StallTimeout in part 2 (default 1s)
          -h, --help            this text

        Durations: 250ms, 1.5s. Exit code: 0 when every part showed what it should, 1 when not, 2 for bad arguments.

        """;

    public static bool TryParse(IReadOnlyList<string> args, out Settings settings, out bool showHelp, [NotNullWhen(false)] out string? error)
    {
        settings = new Settings();
        showHelp = false;
        for (int i = 0; i < args.Count; i++)
        {
            string name = args[i];
            if (name is "-h" or "--help" or "-?")
            {
                showHelp = true;
                error = null;
                return true;
            }

            string value;
            int equals = name.IndexOf('=', StringComparison.Ordinal);
            if (name.StartsWith("--", StringComparison.Ordinal) && equals > 0)
            {
                value = name[(equals + 1)..];
                name = name[..equals];
            }
            else if (IsKnown(name) && i + 1 < args.Count)
            {
                value = args[++i];
            }
            else
            {
                error = IsKnown(name) ? $"{name} needs a value (see --help)." : $"unknown option '{name}' (see --help).";
                return false;
            }

            Settings current = settings;
            error = name switch
            {
                "--parts" => ParseParts(value, ref current),
                "--duration" => ParseDuration(name, value, out TimeSpan d) ?? Set(() => current = current with { Duration = d }),
                "--interval" => ParseDuration(name, value, out TimeSpan d) ?? Set(() => current = current with { Interval = d }),
                "--latency" => ParseDuration(name, value, out TimeSpan d) ?? Set(() => current = current with { Latency = d }),
                "--stall-timeout" => ParseDuration(name, value, out TimeSpan d) ?? Set(() => current = current with { StallTimeout = d }),
                _ => $"unknown option '{name}' (see --help).",
            };
            if (error is not null)
            {
                return false;
            }

            settings = current;
        }

        error = settings.Validate();
        return error is null;
    }

    private static bool IsKnown(string name) => name is "--parts" or "--duration" or "--interval" or "--latency" or "--stall-timeout";

    private static string? Set(Action apply)
    {
        apply();
        return null;
    }

    private static string? ParseParts(string value, ref Settings settings)
    {
        var parts = new HashSet<string>(value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries), StringComparer.OrdinalIgnoreCase);
        foreach (string part in parts)
        {
            if (part.ToLowerInvariant() is not ("pool" or "loop" or "exceptions"))
            {
                return $"unknown part '{part}'; the parts are pool, loop, exceptions.";
            }
        }

        if (parts.Count == 0)
        {
            return "--parts needs at least one part.";
        }

        settings = settings with { Pool = parts.Contains("pool"), Loop = parts.Contains("loop"), Exceptions = parts.Contains("exceptions") };
        return null;
    }

    /// <summary>Parses <c>250ms</c>, <c>1.5s</c>.</summary>
    private static string? ParseDuration(string name, string value, out TimeSpan duration)
    {
        duration = default;
        string text = value.Trim();
        (string suffix, double milliseconds)[] units = [("ms", 1), ("s", 1_000)];
        foreach ((string suffix, double milliseconds) in units)
        {
            if (text.EndsWith(suffix, StringComparison.OrdinalIgnoreCase) &&
                double.TryParse(text[..^suffix.Length], NumberStyles.Float, CultureInfo.InvariantCulture, out double number) &&
                double.IsFinite(number) && Math.Abs(number * milliseconds) < TimeSpan.FromDays(1).TotalMilliseconds)
            {
                duration = TimeSpan.FromMilliseconds(number * milliseconds);
                return null;
            }
        }

        return $"{name} must be a duration such as 250ms or 1.5s (got '{value}').";
    }
}
