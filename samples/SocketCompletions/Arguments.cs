using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using Samples.Support;

namespace SocketCompletions;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport). Bad arguments: one line on stderr, exit code 2 (see Program.cs).</summary>
internal sealed class Arguments
{
    private static readonly SampleCommandLine s_line = new(
        "How socket completions reach a loop when the thread pool starves. Runs itself in four child processes: " +
        "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS unset and =1, each with the pool's threads blocked forever (\"blocked\") " +
        "and with a flood of blocking work items (\"flood\"). Exit code: 0 when it ran, 2 for bad arguments.");

    private static readonly Option<int> s_requests = s_line.Add(SampleCommandLine.WholeNumber("--requests", 200, "request/reply round trips per phase, 1 to 10000"));
    private static readonly Option<TimeSpan?> s_starve = s_line.Add(SampleCommandLine.Duration("--starve", TimeSpan.FromSeconds(3), "how long the flood scenario keeps every pool thread blocked at most, 500ms to 30s"));

    // Hidden: how the parent starts a child process.
    private static readonly Option<string> s_child = s_line.Add(SampleCommandLine.Hidden(SampleCommandLine.Choice("--child", "", "", "blocked", "flood")));

    public int Requests { get; private init; } = 200;

    public TimeSpan StarveFor { get; private init; } = TimeSpan.FromSeconds(3);

    /// <summary>Set in a child process: <c>blocked</c> or <c>flood</c>.</summary>
    public string? ChildScenario { get; private init; }

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print; the arguments are then the defaults).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out Arguments arguments, out string? show, [NotNullWhen(false)] out string? error) =>
        s_line.TryParse(args, new Arguments(), Read, Validate, out arguments, out show, out error);

    private static Arguments Read(ParseResult result) => new()
    {
        Requests = result.GetValue(s_requests),
        StarveFor = SampleCommandLine.GetDuration(result, s_starve)!.Value,
        ChildScenario = result.GetValue(s_child) is { Length: > 0 } child ? child : null,
    };

    private static string? Validate(Arguments parsed) => parsed switch
    {
        { Requests: < 1 or > 10_000 } => $"--requests must be from 1 to 10000 (got {parsed.Requests}).",
        _ when parsed.StarveFor < TimeSpan.FromMilliseconds(500) || parsed.StarveFor > TimeSpan.FromSeconds(30) =>
            $"--starve must be from 500ms to 30s (got {parsed.StarveFor.TotalMilliseconds} ms).",
        _ => null,
    };
}
