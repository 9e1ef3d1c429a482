using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using Samples.Support;

namespace Observability;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
internal static class CommandLine
{
    private static readonly SampleCommandLine s_line = new(
        "What the PriorityAsync meter and trace recorder show for a small workload on a three-level loop: every instrument printed " +
        "once a second, as dotnet-counters would, and optionally a Chrome trace. Exit code: 0 when it ran, 2 for bad arguments.");

    private static readonly TimeSpan s_defaultDuration = TimeSpan.FromSeconds(3);
    private static readonly Option<TimeSpan?> s_duration = s_line.Add(SampleCommandLine.Duration("--duration", s_defaultDuration, "how long the workload runs, 1s to 600s"));
    private static readonly Option<string?> s_trace = s_line.Add(SampleCommandLine.OutputFile("--trace", "FILE.json", "also record the run for Perfetto or chrome://tracing"));

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out TimeSpan duration, out string? tracePath, out string? show, [NotNullWhen(false)] out string? error)
    {
        bool parsed = s_line.TryParse(args, (s_defaultDuration, null), Read, Validate, out (TimeSpan Duration, string? TracePath) run, out show, out error);
        (duration, tracePath) = run;
        return parsed;
    }

    private static (TimeSpan Duration, string? TracePath) Read(ParseResult result) =>
        (SampleCommandLine.GetDuration(result, s_duration)!.Value, result.GetValue(s_trace));

    private static string? Validate((TimeSpan Duration, string? TracePath) run) =>
        run.Duration < TimeSpan.FromSeconds(1) || run.Duration > TimeSpan.FromSeconds(600)
            ? $"--duration must be from 1s to 600s (got {run.Duration.TotalSeconds} s)."
            : null;
}
