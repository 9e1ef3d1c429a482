using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Text;
using System.Text.RegularExpressions;
using Snippets;

namespace Docs.Tests;

/// <summary>
/// Every command that README.md and the samples' READMEs tell a user to run, run: the sample's program with the documented
/// arguments and environment, as a process, to its end and exit code 0. What differs from typing it: the program is the one this
/// test run built (no <c>-c Release</c> build of its own), the working directory is a temporary folder (files a command writes land
/// there), the durations are compressed where the sample has an option for it (<see cref="s_compressed"/>), and a command that runs
/// until Ctrl+C gets SIGINT once it has shown it works and that it can act on the signal (the host has started). One at a time,
/// and not beside the packs or the samples run in process (the collection): some of these programs keep both cores busy on purpose. The BrokerWorker's and the message buses' commands are tested with them
/// (tests/Samples.Tests, tests/MessageBus.Postgres.Tests), and <c>dotnet test</c> is the command that runs this test.
/// </summary>
[Collection(PackCollection.Name)]
public sealed partial class DocumentedCommandTests : IDisposable
{
    // The sample's own option for time, added after the documented arguments; the run's shape (modes, messages, sizes) is as written.
    private static readonly Dictionary<string, string[]> s_compressed = new(StringComparer.Ordinal)
    {
        ["LeaseWorker"] = ["--time-scale", "0.01"],   // every duration 100 times shorter than written, 10 times shorter than the default
        ["Results"] = ["--sizes", "10,1000"],         // the 10,000 and 100,000-call runs take most of a minute
        ["FrameLoop"] = ["--duration", "1.5s"],       // 90 frames per drain instead of 300 (one wave): the machine's clock spins for real
    };

    // What the Generic Host logs once every hosted service has started. Only from then on does Ctrl+C stop a hosted program as its
    // README says; before the host has installed its handlers, SIGINT ends the process with exit code 130 (docs/hosting.md, "Ctrl+C
    // during start-up"), and a program's own first line (a heartbeat) can come before that.
    private const string HostStarted = "Application started.";

    // The commands that run until Ctrl+C, and the lines of output after which they get it: the program's own line that shows it
    // works, and the one that shows it can act on the signal.
    private static readonly Dictionary<string, string[]> s_untilCtrlC = new(StringComparer.Ordinal)
    {
        ["HostingGettingStarted"] = ["Heartbeat at level 2", HostStarted],
        ["HostedWorker --messages 1000"] = ["messages completed.", HostStarted],
    };

    // Their commands need a broker: tests/Samples.Tests, tests/MessageBus.Postgres.Tests and tests/RabbitMqConsumers.Tests run them.
    private static readonly string[] s_testedElsewhere = ["BrokerWorker", "MessageBus", "MessageBus.Postgres", "RabbitMqConsumers"];
    private static readonly TimeSpan s_limit = TimeSpan.FromMinutes(3);

    private readonly string _scratch = Directory.CreateTempSubdirectory("priorityasync-commands-").FullName;

    public static TheoryData<string> Commands()
    {
        var data = new TheoryData<string>();
        foreach (string command in DocumentedCommands(Repository.FindRoot(AppContext.BaseDirectory)))
        {
            data.Add(command);
        }

        return data;
    }

    [Fact]
    public void Docs_Commands_AreFoundInTheReadmeAndEverySampleReadme()
    {
        string[] commands = DocumentedCommands(Repository.FindRoot(AppContext.BaseDirectory)).ToArray();

        commands.Should().Contain(c => c.StartsWith("README.md: dotnet run --project samples/Quickstart", StringComparison.Ordinal))
            .And.Contain(c => c.StartsWith("README.md: dotnet run --project samples/LeaseWorker -c Release", StringComparison.Ordinal))
            .And.Contain(c => c.Contains("DOTNET_ThreadPool_ForceMinWorkerThreads=64 dotnet run", StringComparison.Ordinal), "inline ones too");
        foreach (string sample in new[] { "FrameLoop", "HostedWorker", "HostingGettingStarted", "LeaseWorker", "Observability", "Quickstart", "Results", "SocketCompletions", "SyncOverAsync" })
        {
            commands.Should().Contain(c => c.StartsWith($"samples/{sample}/README.md: ", StringComparison.Ordinal), sample);
        }
    }

    [Theory]
    [MemberData(nameof(Commands))]
    public async Task DocumentedCommand_Run_ExitsZero(string command)
    {
        string line = command[(command.IndexOf(": ", StringComparison.Ordinal) + 2)..];
        Match parsed = RunCommand().Match(line);
        parsed.Success.Should().BeTrue($"'{line}' is 'dotnet run --project samples/NAME [-c Release] [-- ARGUMENTS]'");
        string sample = parsed.Groups["sample"].Value;
        string[] arguments = parsed.Groups["arguments"].Success
            ? parsed.Groups["arguments"].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries)
            : [];
        string[]? stopAfter = s_untilCtrlC.FirstOrDefault(p => $"{sample} {string.Join(' ', arguments)}".Trim() == p.Key).Value;

        var start = new ProcessStartInfo("dotnet") { WorkingDirectory = _scratch, RedirectStandardOutput = true, RedirectStandardError = true };
        if (stopAfter is not null && SigintIgnoredHere())
        {
            // This test run was started with SIGINT ignored (a background job of a non-interactive shell: `dotnet test &` in a
            // script). Its children inherit that and .NET keeps it, so Ctrl+C could never reach the program, which would run on to
            // the limit. GNU env gives it SIGINT's default back, as a terminal's Ctrl+C finds it.
            start.FileName = "env";
            start.ArgumentList.Add("--default-signal=INT");
            start.ArgumentList.Add("dotnet");
        }

        start.ArgumentList.Add("exec");
        start.ArgumentList.Add(SampleProgram(sample));
        foreach (string argument in arguments.Concat(s_compressed.GetValueOrDefault(sample, [])))
        {
            start.ArgumentList.Add(argument);
        }

        foreach (Capture assignment in parsed.Groups["environment"].Captures)
        {
            string[] pair = assignment.Value.Trim().Split('=', 2);
            start.Environment[pair[0]] = pair[1];
        }

        start.Environment["DOTNET_NOLOGO"] = "1";
        (int exit, string output) = await RunAsync(start, stopAfter);

        exit.Should().Be(0, $"'{line}' runs as its README says:\n{output}");
        foreach (string shown in stopAfter ?? [])
        {
            output.Should().Contain(shown);
        }
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_scratch, recursive: true);
        }
        catch (IOException)
        {
            // What is left is in a temporary folder.
        }
    }

    // Each `dotnet run --project samples/...` line of a bash block, and each one in an inline code span, of README.md and the samples'
    // READMEs, as "FILE: COMMAND" with its trailing comment cut.
    private static IEnumerable<string> DocumentedCommands(string root)
    {
        IEnumerable<string> readmes = Directory.EnumerateDirectories(Path.Combine(root, "samples"))
            .Where(folder => !s_testedElsewhere.Contains(Path.GetFileName(folder)))
            .Select(folder => Path.Combine(folder, "README.md"))
            .Where(File.Exists)
            .Prepend(Path.Combine(root, "README.md"));
        foreach (string readme in readmes.Order(StringComparer.Ordinal))
        {
            string relative = Path.GetRelativePath(root, readme).Replace('\\', '/');
            bool inBash = false;
            foreach (string line in File.ReadLines(readme))
            {
                if (line.StartsWith("```", StringComparison.Ordinal))
                {
                    inBash = !inBash && line.Trim() is "```bash" or "```sh";
                    continue;
                }

                IEnumerable<string> found = inBash
                    ? [line.Split(" #", 2)[0].Trim()]
                    : InlineCode().Matches(line).Select(m => m.Groups["code"].Value.Trim());
                foreach (string command in found.Where(c => RunCommand().IsMatch(c)))
                {
                    yield return $"{relative}: {command}";
                }
            }
        }
    }

    private static string SampleProgram(string sample)
    {
        string root = Repository.FindRoot(AppContext.BaseDirectory);
        string configuration = typeof(DocumentedCommandTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "Configuration").Value!;
        string program = Path.Combine(root, "samples", sample, "bin", configuration, "net10.0", sample + ".dll");
        File.Exists(program).Should().BeTrue($"the test run built samples/{sample} (Docs.Tests references it)");
        return program;
    }

    private static async Task<(int Exit, string Output)> RunAsync(ProcessStartInfo start, string[]? stopAfter)
    {
        using Process process = Process.Start(start)!;
        var output = new StringBuilder();
        var shown = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var notYetShown = new HashSet<string>(stopAfter ?? [], StringComparer.Ordinal);
        void Read(string? line)
        {
            if (line is null)
            {
                return;
            }

            lock (output)
            {
                output.AppendLine(line);
                if (stopAfter is not null && notYetShown.RemoveWhere(l => line.Contains(l, StringComparison.Ordinal)) > 0 && notYetShown.Count == 0)
                {
                    shown.TrySetResult();
                }
            }
        }

        process.OutputDataReceived += (_, e) => Read(e.Data);
        process.ErrorDataReceived += (_, e) => Read(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var limit = new CancellationTokenSource(s_limit);
        try
        {
            if (stopAfter is not null)
            {
                await Task.WhenAny(shown.Task, process.WaitForExitAsync(limit.Token));
                shown.Task.IsCompleted.Should().BeTrue($"the program showed '{string.Join("' and '", stopAfter)}' before it ended:\n{output}");
                // Ctrl+C: the shell's own kill, present wherever /bin/sh is.
                using Process interrupt = Process.Start("/bin/sh", ["-c", $"kill -INT {process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)}"])!;
                await interrupt.WaitForExitAsync(limit.Token);
            }

            await process.WaitForExitAsync(limit.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"'{start.FileName} {string.Join(' ', start.ArgumentList)}' did not end within {s_limit}:\n{output}");
        }

        process.WaitForExit(); // the output's end
        lock (output)
        {
            return (process.ExitCode, output.ToString());
        }
    }

    /// <summary>Whether this process ignores SIGINT (Linux: the SigIgn mask of /proc/self/status, bit 1 for signal 2); false where
    /// there is no such file.</summary>
    private static bool SigintIgnoredHere()
    {
        const string StatusFile = "/proc/self/status";
        if (!File.Exists(StatusFile))
        {
            return false;
        }

        string? mask = File.ReadLines(StatusFile).FirstOrDefault(l => l.StartsWith("SigIgn:", StringComparison.Ordinal))?["SigIgn:".Length..].Trim();
        return mask is not null
            && ulong.TryParse(mask, System.Globalization.NumberStyles.HexNumber, System.Globalization.CultureInfo.InvariantCulture, out ulong ignored)
            && (ignored & (1UL << (2 - 1))) != 0;
    }

    [GeneratedRegex(@"^(?<environment>[A-Za-z_][A-Za-z0-9_]*=\S+ )*dotnet run --project samples/(?<sample>[A-Za-z.]+)(?: -c Release)?(?: -- (?<arguments>.+))?$")]
    private static partial Regex RunCommand();

    [GeneratedRegex(@"`(?<code>[^`]*dotnet run --project samples/[^`]*)`")]
    private static partial Regex InlineCode();
}
