using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using System.Linq;
using Samples.Support;

namespace SyncOverAsync;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
internal static class CommandLine
{
    private static readonly string[] s_allParts = ["pool", "loop", "exceptions"];
    private static readonly Settings s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "Task.Wait() against await. 1: the article's thread-pool experiment scaled to seconds (requests served with Wait and with " +
        "await). 2: the same handler on a PriorityContextThread with StallTimeout set: the blocked loop is reported. 3: what Wait, " +
        "await and PriorityContext.Run throw when the call fails. Exit code: 0 when every part showed what it should, 1 when not, " +
        "2 for bad arguments.");

    private static readonly Option<IReadOnlyList<string>> s_parts = s_line.Add(SampleCommandLine.List("--parts", s_allParts, s_allParts, "part", "comma-separated: the parts to run"));
    private static readonly Option<TimeSpan?> s_duration = s_line.Add(SampleCommandLine.Duration("--duration", s_defaults.Duration, "how long requests arrive in part 1 (the article ran 60s)"));
    private static readonly Option<TimeSpan?> s_interval = s_line.Add(SampleCommandLine.Duration("--interval", s_defaults.Interval, "time between requests in part 1 (as the article)"));
    private static readonly Option<TimeSpan?> s_latency = s_line.Add(SampleCommandLine.Duration("--latency", s_defaults.Latency, "the backend call's round trip (the article's was about 900ms)"));
    private static readonly Option<TimeSpan?> s_stallTimeout = s_line.Add(SampleCommandLine.Duration("--stall-timeout", s_defaults.StallTimeout, "PriorityContextOptions.StallTimeout in part 2"));

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print; the settings are then the defaults).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out Settings settings, out string? show, [NotNullWhen(false)] out string? error) =>
        s_line.TryParse(args, s_defaults, Read, s => s.Validate(), out settings, out show, out error);

    private static Settings Read(ParseResult result)
    {
        IReadOnlyList<string> parts = SampleCommandLine.GetList(result, s_parts);
        return new Settings
        {
            Pool = parts.Contains("pool"),
            Loop = parts.Contains("loop"),
            Exceptions = parts.Contains("exceptions"),
            Duration = SampleCommandLine.GetDuration(result, s_duration)!.Value,
            Interval = SampleCommandLine.GetDuration(result, s_interval)!.Value,
            Latency = SampleCommandLine.GetDuration(result, s_latency)!.Value,
            StallTimeout = SampleCommandLine.GetDuration(result, s_stallTimeout)!.Value,
        };
    }
}
