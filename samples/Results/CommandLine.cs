using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using System.Linq;
using Samples.Support;

namespace Results;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
internal static class CommandLine
{
    private static readonly Dictionary<string, Variant> s_variants = new(StringComparer.OrdinalIgnoreCase)
    {
        ["one-by-one"] = Variant.OneByOne,
        ["whenall"] = Variant.WhenAll,
        ["whenany"] = Variant.WhenAnyLoop,
        ["packed"] = Variant.Packed,
        ["priority"] = Variant.Priority,
    };

    private static readonly Settings s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "N calls with varied latencies whose results are processed as they arrive, urgent ones (a user waits for them) before " +
        "prefetches. Five variants side by side: one by one, WhenAll, the WhenAny loop, the article's packed continuations on the " +
        "thread pool, and PriorityAsync. Exit code: 0 when it ran, 1 when a variant processed a result other than once or " +
        "PriorityAsync processed an urgent result late, 2 for bad arguments.");

    private static readonly Option<IReadOnlyList<int>> s_sizes = s_line.Add(SampleCommandLine.WholeNumbers(
        "--sizes", s_defaults.Sizes, 1, Settings.MaxCalls, "numbers of calls, comma-separated: each a run of every variant"));
    private static readonly Option<IReadOnlyList<string>> s_variantNames = s_line.Add(SampleCommandLine.List(
        "--variants", [.. s_variants.Keys], [.. s_variants.Keys], "variant", "comma-separated: the variants to run"));
    private static readonly Option<TimeSpan?> s_window = s_line.Add(SampleCommandLine.Duration("--window", s_defaults.Window, "responses arrive over this time, in up to 50 batches"));
    private static readonly Option<TimeSpan?> s_work = s_line.Add(SampleCommandLine.Duration("--work", s_defaults.Work, "CPU work to process one result"));
    private static readonly Option<int> s_urgentEvery = s_line.Add(SampleCommandLine.WholeNumber("--urgent-every", s_defaults.UrgentEvery, "one call in N is urgent, on average"));
    private static readonly Option<int> s_whenAnyLimit = s_line.Add(SampleCommandLine.WholeNumber("--whenany-limit", s_defaults.WhenAnyLimit, "above this many calls the O(n^2) WhenAny loop is not run but extrapolated"));

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print; the settings are then the defaults).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out Settings settings, out string? show, [NotNullWhen(false)] out string? error) =>
        s_line.TryParse(args, s_defaults, Read, s => s.Validate(), out settings, out show, out error);

    private static Settings Read(ParseResult result) => new()
    {
        Sizes = SampleCommandLine.GetList(result, s_sizes),
        Variants = [.. SampleCommandLine.GetList(result, s_variantNames).Select(name => s_variants[name])],
        Window = SampleCommandLine.GetDuration(result, s_window)!.Value,
        Work = SampleCommandLine.GetDuration(result, s_work)!.Value,
        UrgentEvery = result.GetValue(s_urgentEvery),
        WhenAnyLimit = result.GetValue(s_whenAnyLimit),
    };
}
