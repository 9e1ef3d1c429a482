using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace Results;

/// <summary>Parses the command line. Never throws for bad input: it returns a one-line error instead.</summary>
internal static class CommandLine
{
    public const string Usage =
        """
        Usage: dotnet run --project samples/Results -c Release -- [options]

        N calls with varied latencies whose results are processed as they arrive, urgent ones (a user waits for them) before
        prefetches. Five variants side by side: one by one, WhenAll, the WhenAny loop, the seed's packed continuations on the
        thread pool, and PriorityAsync.

          --sizes LIST          numbers of calls, comma-separated (default 10,1000,10000,100000)
          --variants LIST       one-by-one,whenall,whenany,packed,priority (default: all five)
          --window D            responses arrive over this time, in up to 50 batches (default 200ms)
          --work D              CPU work to process one result (default 10us)
          --urgent-every N      one call in N is urgent, on average (default 5)
          --whenany-limit N     above this many calls the O(n^2) WhenAny loop is not run but extrapolated (default 10000)
          -h, --help            this text

        Durations: 10us, 250ms, 1.5s. Exit code: 0 when it ran, 1 when a variant processed a result other than once or
        PriorityAsync processed an urgent result late, 2 for bad arguments.

        """;

    private static readonly Dictionary<string, Variant> s_variants = new(StringComparer.OrdinalIgnoreCase)
    {
        ["one-by-one"] = Variant.OneByOne,
        ["whenall"] = Variant.WhenAll,
        ["whenany"] = Variant.WhenAnyLoop,
        ["packed"] = Variant.Packed,
        ["priority"] = Variant.Priority,
    };

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
                "--sizes" => ParseSizes(value, out IReadOnlyList<int> sizes) ?? Set(() => current = current with { Sizes = sizes }),
                "--variants" => ParseVariants(value, out IReadOnlyList<Variant> variants) ?? Set(() => current = current with { Variants = variants }),
                "--window" => ParseDuration(name, value, out TimeSpan window) ?? Set(() => current = current with { Window = window }),
                "--work" => ParseDuration(name, value, out TimeSpan work) ?? Set(() => current = current with { Work = work }),
                "--urgent-every" => ParseInt(name, value, out int every) ?? Set(() => current = current with { UrgentEvery = every }),
                "--whenany-limit" => ParseInt(name, value, out int limit) ?? Set(() => current = current with { WhenAnyLimit = limit }),
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

    private static bool IsKnown(string name) =>
        name is "--sizes" or "--variants" or "--window" or "--work" or "--urgent-every" or "--whenany-limit";

    private static string? Set(Action apply)
    {
        apply();
        return null;
    }

    private static string? ParseSizes(string value, out IReadOnlyList<int> sizes)
    {
        var list = new List<int>();
        sizes = list;
        foreach (string part in value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!int.TryParse(part.Replace("_", "", StringComparison.Ordinal), NumberStyles.Integer, CultureInfo.InvariantCulture, out int size))
            {
                return $"--sizes must be whole numbers separated by commas (got '{value}').";
            }

            list.Add(size);
        }

        return list.Count == 0 ? "--sizes needs at least one size." : null;
    }

    private static string? ParseVariants(string value, out IReadOnlyList<Variant> variants)
    {
        var list = new List<Variant>();
        variants = list;
        foreach (string part in value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!s_variants.TryGetValue(part, out Variant variant))
            {
                return $"unknown variant '{part}'; the variants are {string.Join(", ", s_variants.Keys)}.";
            }

            if (!list.Contains(variant))
            {
                list.Add(variant);
            }
        }

        return list.Count == 0 ? "--variants needs at least one variant." : null;
    }

    private static string? ParseInt(string name, string value, out int number) =>
        int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out number) ? null : $"{name} must be a whole number (got '{value}').";

    /// <summary>Parses <c>10us</c>, <c>250ms</c>, <c>1.5s</c>.</summary>
    private static string? ParseDuration(string name, string value, out TimeSpan duration)
    {
        duration = default;
        string text = value.Trim();
        (string suffix, double microseconds)[] units = [("us", 1), ("ms", 1_000), ("s", 1_000_000)];
        foreach ((string suffix, double microseconds) in units)
        {
            if (text.EndsWith(suffix, StringComparison.OrdinalIgnoreCase) &&
                double.TryParse(text[..^suffix.Length], NumberStyles.Float, CultureInfo.InvariantCulture, out double number) &&
                double.IsFinite(number) && Math.Abs(number * microseconds) < TimeSpan.FromDays(1).TotalMicroseconds)
            {
                duration = TimeSpan.FromMicroseconds(number * microseconds);
                return null;
            }
        }

        return $"{name} must be a duration such as 10us, 250ms or 1.5s (got '{value}').";
    }
}
