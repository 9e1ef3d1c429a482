using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;

namespace PriorityAsync.Inspector.Tests;

/// <summary>What the tool says when it cannot inspect: one line on standard error, an exit code of its own, and nothing left in the
/// target. (Each exit code in every mode: <see cref="ModesTests"/>.)</summary>
public sealed class BadInputTests
{
    [Fact]
    public async Task Attach_TargetExitsWhileAttached_SaysSoWithExitCode6AndKeepsTheRecording()
    {
        string recording = Path.Combine(Path.GetTempPath(), $"prio-exit-{Guid.NewGuid():N}.nettrace");
        try
        {
            await using TestTarget target = await TestTarget.StartAsync();
            using Prio.Running prio = Prio.Start(target.Id.ToString(CultureInfo.InvariantCulture), "--record", recording, "--no-view");
            await target.WaitForLineAsync("inspector on");
            await target.SendAsync("exit");
            await target.WaitForExitAsync();
            (int exitCode, _, string error) = await prio.WaitAsync();

            exitCode.Should().Be(ExitCodes.TargetExited);
            Prio.OneLine(error).Should().Be($"prio: process {target.Id} (PriorityAsync.Inspector.Target) exited while the inspector was attached; what it saw is in {recording}.");
            (int replay, string json, string replayError) = await Prio.RunAsync("replay", recording, "--once", "--json");
            replay.Should().Be(ExitCodes.Success, replayError);
            SnapshotJson.Deserialize(json)!.Schedulers.Should().Contain(s => s.Name == "worker");
        }
        finally
        {
            File.Delete(recording);
        }
    }

    [Fact]
    public async Task Attach_StalePortNobodyListensOn_SaysThePortCannotBeOpenedWithExitCode5()
    {
        // A live process whose diagnostics socket exists but refuses connections (what a port left by another runtime, or one this
        // user may not connect to, looks like to the client).
        using Process sleeper = Process.Start(new ProcessStartInfo("sleep", "120") { UseShellExecute = false })!;
        string socketPath = Path.Combine(Path.GetTempPath(), $"dotnet-diagnostic-{sleeper.Id}-1-socket");
        try
        {
            using (var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified))
            {
                socket.Bind(new UnixDomainSocketEndPoint(socketPath)); // bound, never listening, then closed: the file stays
            }

            (int exitCode, _, string error) = await Prio.RunAsync(sleeper.Id.ToString(CultureInfo.InvariantCulture), "--once");

            exitCode.Should().Be(ExitCodes.PortUnavailable);
            Prio.OneLine(error).Should().StartWith($"prio: cannot open the diagnostics port of process {sleeper.Id}: ");
        }
        finally
        {
            File.Delete(socketPath);
            sleeper.Kill();
        }
    }

    [Theory]
    [InlineData("--frobnicate", "prio: unknown option '--frobnicate'. See `prio --help`.")]
    [InlineData("1 --json", "prio: --json needs --once (one snapshot), or goes with ps. See `prio --help`.")]
    [InlineData("1 --sample 5", "prio: --sample takes a number from 10 to 1000, not '5'. See `prio --help`.")]
    [InlineData("1 2", "prio: one process at a time ('1' and '2'). See `prio --help`.")]
    public async Task Run_BadArguments_SaysWhatIsWrongWithExitCode2(string arguments, string message)
    {
        (int exitCode, _, string error) = await Prio.RunAsync(arguments.Split(' '));

        exitCode.Should().Be(ExitCodes.Usage);
        Prio.OneLine(error).Should().Be(message);
    }
}
