using System.Globalization;
using System.Text.RegularExpressions;

namespace PriorityAsync.Inspector.Tests;

/// <summary>
/// The tool's modes without a terminal (the tests run it with standard input and output redirected, as a script or CI would): a line
/// q detaches in every mode, every documented exit code holds in every mode, and the output is plain text. Every wait is gated on
/// what the target reports, and bounded.
/// </summary>
public sealed partial class ModesTests
{
    private static readonly string[] s_modes = ["live", "once", "once-json", "record", "record-no-view"];

    /// <summary>The ways to attach: the live view, one snapshot as text or JSON, a recording with and without the view.</summary>
    public static TheoryData<string> Modes => new(s_modes);

    [Fact]
    public async Task Live_NoTerminal_PlainFramesOneAfterAnotherAndALineQDetaches()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        string id = target.Id.ToString(CultureInfo.InvariantCulture);
        using Prio.Running prio = Prio.Start(id);
        await target.WaitForLineAsync("inspector on");
        await target.SendAsync("slow 30"); // something in the frames
        await prio.WaitForOutputAsync("worker · PriorityContext"); // a frame has seen the loop: quitting sooner may show only the pool

        (int exitCode, string output, string error) = await prio.QuitAsync();

        exitCode.Should().Be(ExitCodes.Success, error);
        await target.WaitForLineAsync("inspector off");
        ControlCharacters(output).Should().BeEmpty("without a terminal the view is plain lines");
        string header = $"prio · PriorityAsync inspector · pid {id} (PriorityAsync.Inspector.Target) · ";
        string[] lines = output.Split('\n');
        int[] frames = Enumerable.Range(0, lines.Length).Where(i => lines[i].StartsWith(header, StringComparison.Ordinal)).ToArray();
        frames.Length.Should().BeGreaterThanOrEqualTo(2, "a frame as it attached and one as it detached: {0}", output);
        frames.Skip(1).Should().OnlyContain(i => lines[i - 1].Length == 0, "frames follow one another, a blank line apart");
        lines[frames[^1]].Should().EndWith(" · detached");
        output.Should().Contain("worker · PriorityContext · 1 thread · 3 levels · Strict · slice 20.0 ms · stall 500 ms · ", "the scheduler's header is whole");
        output.Should().NotContain("q: quit", "there is no key to press without a terminal");
        WrappedFigures(output).Should().BeEmpty();
    }

    [Fact]
    public async Task Once_NoTerminal_PlainTextWithoutKeyHintsOrWrappedFigures()
    {
        await using TestTarget target = await TestTarget.StartAsync();
        (int exitCode, string output, string error) = await Prio.RunAsync(target.Id.ToString(CultureInfo.InvariantCulture), "--once", "--for", "0.5");

        exitCode.Should().Be(ExitCodes.Success, error);
        output.Should().StartWith($"prio · PriorityAsync inspector · pid {target.Id} (PriorityAsync.Inspector.Target) · ").And.Contain(" · one snapshot\n");
        ControlCharacters(output).Should().BeEmpty();
        output.Should().NotContain("q: quit");
        WrappedFigures(output).Should().BeEmpty();
        output.Split('\n').Should().Contain(line => Regex.IsMatch(line, @"^│\s+0\s+\d+\s+-\s+[\d.]+\s+"), "a level row, its figures on one line");
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public Task Attach_TargetExitsWhileAttached_ExitCode6InEveryMode(string mode) =>
        AttachedAsync(mode, async (target, prio, recording) =>
        {
            await target.SendAsync("exit");
            await target.WaitForExitAsync();
            (int exitCode, _, string error) = await prio.WaitAsync();

            exitCode.Should().Be(ExitCodes.TargetExited, error);
            string kept = mode.StartsWith("record", StringComparison.Ordinal) ? $"; what it saw is in {recording}" : string.Empty;
            Prio.OneLine(error).Should().Be($"prio: process {target.Id} (PriorityAsync.Inspector.Target) exited while the inspector was attached{kept}.");
        });

    [Theory]
    [MemberData(nameof(Modes))]
    public Task Attach_QuitLine_ExitCode0InEveryMode(string mode) =>
        AttachedAsync(mode, async (target, prio, _) =>
        {
            (int exitCode, string output, string error) = await prio.QuitAsync();

            exitCode.Should().Be(ExitCodes.Success, error);
            error.Should().BeEmpty();
            await target.WaitForLineAsync("inspector off");
            if (mode == "once-json")
            {
                SnapshotJson.Deserialize(output)!.ProcessId.Should().Be(target.Id, "q ends the watch early; the snapshot is printed");
            }
        });

    [Fact]
    public async Task Attach_FailuresBeforeTheSession_SameExitCodeAndLineInEveryMode()
    {
        string recording = Path.Combine(Path.GetTempPath(), $"prio-mode-{Guid.NewGuid():N}.nettrace");
        int gone = await Prio.ExitedProcessIdAsync();
        await using TestTarget plain = await TestTarget.StartAsync("--plain");
        await using TestTarget diagnosticsOff = await TestTarget.StartAsync(environment: new Dictionary<string, string> { ["DOTNET_EnableDiagnostics"] = "0" });
        await using TestTarget first = await TestTarget.StartAsync();
        await using TestTarget second = await TestTarget.StartAsync();
        try
        {
            foreach (string mode in s_modes)
            {
                string[] options = Arguments(mode, recording, forSeconds: 1);

                (int code, string line) = await RunAsync([gone.ToString(CultureInfo.InvariantCulture), .. options]);
                (code, line).Should().Be((ExitCodes.NoSuchProcess, $"prio: no process has id {gone} (see the running .NET processes with `prio ps`)."), mode);

                (code, line) = await RunAsync([plain.Id.ToString(CultureInfo.InvariantCulture), .. options, "--attach-timeout", "1"]);
                (code, line).Should().Be((ExitCodes.NotPriorityAsync, $"prio: process {plain.Id} (PriorityAsync.Inspector.Target) runs no PriorityAsync scheduler: it does not load PriorityAsync (waited 1 s; --attach-timeout to wait longer)."), mode);

                (code, line) = await RunAsync([diagnosticsOff.Id.ToString(CultureInfo.InvariantCulture), .. options]);
                code.Should().Be(ExitCodes.PortUnavailable, mode);
                line.Should().StartWith($"prio: cannot open the diagnostics port of process {diagnosticsOff.Id}: ", mode);

                // Other tests' targets may run too: at least these two have the name.
                (code, line) = await RunAsync(["PriorityAsync.Inspector.Target", .. options]);
                code.Should().Be(ExitCodes.AmbiguousName, mode);
                line.Should().MatchRegex(@"^prio: \d+ processes are named 'PriorityAsync\.Inspector\.Target' \(.*\): give a process id\.$", mode)
                    .And.Contain(first.Id.ToString(CultureInfo.InvariantCulture)).And.Contain(second.Id.ToString(CultureInfo.InvariantCulture));

                (code, line) = await RunAsync([first.Id.ToString(CultureInfo.InvariantCulture), .. options, "--sample", "5"]);
                (code, line).Should().Be((ExitCodes.Usage, "prio: --sample takes a number from 10 to 1000, not '5'. See `prio --help`."), mode);
            }

            await plain.SendAsync("still there");
            await diagnosticsOff.SendAsync("still there");
        }
        finally
        {
            File.Delete(recording);
        }
    }

    /// <summary>A target, and the tool attached to it in <paramref name="mode"/> (watching for long: only q or the target's end stops
    /// it); <paramref name="body"/> gets both, and the recording's path.</summary>
    private static async Task AttachedAsync(string mode, Func<TestTarget, Prio.Running, string, Task> body)
    {
        string recording = Path.Combine(Path.GetTempPath(), $"prio-mode-{Guid.NewGuid():N}.nettrace");
        try
        {
            await using TestTarget target = await TestTarget.StartAsync();
            using Prio.Running prio = Prio.Start([target.Id.ToString(CultureInfo.InvariantCulture), .. Arguments(mode, recording, forSeconds: 120)]);
            await target.WaitForLineAsync("inspector on");
            await body(target, prio, recording);
        }
        finally
        {
            File.Delete(recording);
        }
    }

    /// <summary>The options of a mode: <c>--for</c> bounds how long <c>--once</c> watches (a q, or the target's end, comes first).</summary>
    private static string[] Arguments(string mode, string recording, double forSeconds) => mode switch
    {
        "live" => [],
        "once" => ["--once", "--for", forSeconds.ToString(CultureInfo.InvariantCulture)],
        "once-json" => ["--once", "--json", "--for", forSeconds.ToString(CultureInfo.InvariantCulture)],
        "record" => ["--record", recording],
        "record-no-view" => ["--record", recording, "--no-view"],
        _ => throw new ArgumentOutOfRangeException(nameof(mode), mode, "Not a mode of these tests."),
    };

    private static async Task<(int Code, string Line)> RunAsync(string[] args)
    {
        (int exitCode, string output, string error) = await Prio.RunAsync(args);
        output.Should().BeEmpty("a failure before the session prints nothing but its line on standard error");
        return (exitCode, Prio.OneLine(error));
    }

    /// <summary>Every character below a space but the line feed, and DEL: escape sequences, carriage returns, tabs.</summary>
    private static List<string> ControlCharacters(string output) =>
        output.Where(c => (c < ' ' && c != '\n') || c == '\u007f').Select(c => $"U+{(int)c:X4}").Distinct().ToList();

    /// <summary>Table lines that hold nothing but units: a figure such as "12.6 ms" whose unit went to the next line.</summary>
    private static List<string> WrappedFigures(string output) =>
        output.Split('\n').Where(line => UnitsOnly().IsMatch(line)).ToList();

    [GeneratedRegex(@"^[│\s]*((ms|us|s)\s+)*(ms|us|s)[│\s]*$")]
    private static partial Regex UnitsOnly();
}
