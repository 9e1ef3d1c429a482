using System.Diagnostics;
using System.IO;
using System.Text.Json;
using Xunit.Abstractions;

namespace LeaseWorker.Tests;

/// <summary>
/// The worker with the thread pool starved for the whole run: <c>--starve-pool</c> blocks every minimum pool thread forever.
/// </summary>
/// <remarks>
/// <para>Each scenario runs the sample's own executable in a child process (<c>dotnet LeaseWorker.dll</c>), not in this one: the
/// blocked threads are never released (that is the scenario), the priority scenarios also forbid the pool to inject any thread
/// (<c>DOTNET_ThreadPool_ForceMinWorkerThreads</c> = <c>DOTNET_ThreadPool_ForceMaxWorkerThreads</c> = the blocked count, settings
/// read once at process start), and the test runner needs pool threads of its own.</para>
/// <para>What holds at any load: in the child the pool has no free thread at all during the measured run, so a priority run that
/// needed one for anything (a timer, a reply, a continuation) would never finish, and the test fails at its timeout saying so. That it
/// finishes, with every message accounted for by the bus, is the claim. Whether it also keeps every lease is a matter of time, not of
/// threads: proven on virtual time (<see cref="ScenarioTests"/>), where no pool is involved either.</para>
/// </remarks>
public class StarvedPoolTests
{
    private const int BlockedThreads = 2;
    private static readonly TimeSpan s_childTimeout = TimeSpan.FromMinutes(2);

    private readonly ITestOutputHelper _output;

    public StarvedPoolTests(ITestOutputHelper output) => _output = output;

    public static TheoryData<string, string[]> PriorityScenarios => new()
    {
        { "article ratios (CPU 1 s), no checkpoints", ["--messages", "4", "--steps", "3"] },
        { "CPU 2 s with 250 ms checkpoints", ["--messages", "3", "--steps", "3", "--cpu", "2s", "--checkpoint", "250ms"] },
    };

    [Theory]
    [MemberData(nameof(PriorityScenarios))]
    public void Priority_EveryPoolThreadBlockedAndNoneInjected_FinishesWithEveryMessageAccountedFor(string scenario, string[] settings)
    {
        JsonElement result = RunChild("priority", settings, forbidInjection: true);
        _output.WriteLine($"{scenario}: {Describe(result)}");

        int messages = int.Parse(settings[1], System.Globalization.CultureInfo.InvariantCulture);
        result.GetProperty("bus").GetProperty("received").GetInt32().Should().Be(messages);
        (result.GetProperty("bus").GetProperty("succeeded").GetInt32() + result.GetProperty("bus").GetProperty("lost").GetInt32()).Should().Be(messages);
    }

    [Fact]
    public void Single_EveryMinimumPoolThreadBlocked_FinishesOnceThePoolInjectsThreads()
    {
        // FIFO on one thread, its timers on the starved pool, which may inject threads here (or the run would never end).
        JsonElement result = RunChild("single", ["--messages", "4", "--steps", "3"], forbidInjection: false);
        _output.WriteLine(Describe(result));

        result.GetProperty("bus").GetProperty("received").GetInt32().Should().Be(4);
        (result.GetProperty("bus").GetProperty("succeeded").GetInt32() + result.GetProperty("bus").GetProperty("lost").GetInt32()).Should().Be(4);
    }

    private static JsonElement RunChild(string mode, string[] settings, bool forbidInjection)
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "LeaseWorker.dll");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(dll);
        foreach (string argument in (string[])["--modes", mode, "--time-scale", "0.05", "--json", "--starve-pool", $"{BlockedThreads}", .. settings])
        {
            start.ArgumentList.Add(argument);
        }

        // "Every minimum pool thread": the minimum is pinned, so the blocked count covers it on any machine.
        start.Environment["DOTNET_ThreadPool_ForceMinWorkerThreads"] = $"{BlockedThreads}";
        if (forbidInjection)
        {
            start.Environment["DOTNET_ThreadPool_ForceMaxWorkerThreads"] = $"{BlockedThreads}";
        }

        using Process child = Process.Start(start)!;
        Task<string> stdout = child.StandardOutput.ReadToEndAsync();
        Task<string> stderr = child.StandardError.ReadToEndAsync();
        if (!child.WaitForExit(s_childTimeout))
        {
            child.Kill(entireProcessTree: true);
            throw new Xunit.Sdk.XunitException(
                $"LeaseWorker --modes {mode} with the pool starved{(forbidInjection ? " and no injection allowed" : string.Empty)} did not finish " +
                $"within {s_childTimeout.TotalMinutes} minutes: something it awaited needed a thread-pool thread.");
        }

        child.ExitCode.Should().Be(0, $"the child's stderr: {stderr.Result}");
        using JsonDocument json = JsonDocument.Parse(stdout.Result);
        json.RootElement.GetProperty("settings").GetProperty("starvePool").GetInt32().Should().Be(BlockedThreads);
        return json.RootElement.GetProperty("results")[0].Clone();
    }

    // The JSON's durations are in seconds.
    private static string Describe(JsonElement r) =>
        $"{r.GetProperty("mode").GetString()}: received {r.GetProperty("bus").GetProperty("received").GetInt32()}, lost {r.GetProperty("bus").GetProperty("lost").GetInt32()}, " +
        $"makespan/bound {r.GetProperty("makespanOverBound").GetDouble():0.000}, worst refresh lateness {Ms(r.GetProperty("bus"), "worstRefreshLateness")} ms, " +
        $"worst timer lateness {Ms(r, "worstTimerLateness")} ms, bystander stall {Ms(r, "machineStall")} ms, " +
        $"thread-pool delay {Ms(r, "threadPoolDelay")} ms";

    private static string Ms(JsonElement r, string seconds) =>
        (r.GetProperty(seconds).GetDouble() * 1000).ToString("0.0", System.Globalization.CultureInfo.InvariantCulture);
}
