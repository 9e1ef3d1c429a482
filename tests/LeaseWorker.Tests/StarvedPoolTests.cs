using System.Diagnostics;
using System.IO;
using System.Text;
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
/// read once at process start), and the test runner needs pool threads of its own. In a child process the pool has no free thread
/// at all during the measured run, so a priority run that needed one for anything (a timer, a reply, a continuation) would not lose a
/// lease late: it would never finish, and the test fails at its timeout saying so.</para>
/// <para>Counts, not times: leases lost as the bus counted them. A quiet attempt is enough for "0 lost" (noise from other processes
/// only ever delays the worker), so that claim gets up to three attempts; the FIFO mode must lose in the one attempt it gets.</para>
/// </remarks>
[Trait("Category", "Timing")]
public class StarvedPoolTests
{
    private const int Attempts = 3;
    private const int BlockedThreads = 2;
    private static readonly TimeSpan s_childTimeout = TimeSpan.FromMinutes(2);

    private readonly ITestOutputHelper _output;

    public StarvedPoolTests(ITestOutputHelper output) => _output = output;

    public static TheoryData<string, string[]> PriorityScenarios => new()
    {
        { "seed ratios (CPU 1 s), no checkpoints", ["--messages", "12", "--steps", "10"] },
        { "CPU 2 s with 250 ms checkpoints", ["--messages", "6", "--steps", "5", "--cpu", "2s", "--checkpoint", "250ms"] },
        { "CPU 4 s with 250 ms checkpoints", ["--messages", "4", "--steps", "4", "--cpu", "4s", "--checkpoint", "250ms"] },
    };

    [Theory]
    [MemberData(nameof(PriorityScenarios))]
    public void Priority_EveryPoolThreadBlockedAndNoneInjected_LosesNothing(string scenario, string[] settings)
    {
        var report = new StringBuilder($"No attempt out of {Attempts} lost 0 leases ({scenario}, pool starved):");
        for (int attempt = 1; attempt <= Attempts; attempt++)
        {
            JsonElement result = RunChild("priority", settings, forbidInjection: true);
            string description = Describe(result);
            _output.WriteLine($"attempt {attempt}: {description}");
            result.GetProperty("received").GetInt32().Should().Be(int.Parse(settings[1], System.Globalization.CultureInfo.InvariantCulture));
            if (result.GetProperty("lost").GetInt32() == 0)
            {
                result.GetProperty("succeeded").GetInt32().Should().Be(result.GetProperty("received").GetInt32());
                return;
            }

            report.Append($"\n  attempt {attempt}: {description}");
        }

        throw new Xunit.Sdk.XunitException(report.ToString());
    }

    [Fact]
    public void Single_EveryMinimumPoolThreadBlocked_LosesMessages()
    {
        // FIFO on one thread, its timers on the starved pool (which may inject threads here, or the run would never end).
        JsonElement result = RunChild("single", ["--messages", "10", "--steps", "5"], forbidInjection: false);
        _output.WriteLine(Describe(result));

        result.GetProperty("received").GetInt32().Should().Be(10);
        result.GetProperty("lost").GetInt32().Should().BeGreaterThanOrEqualTo(5, Describe(result));
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

    private static string Describe(JsonElement r) =>
        $"{r.GetProperty("mode").GetString()}: received {r.GetProperty("received").GetInt32()}, lost {r.GetProperty("lost").GetInt32()}, " +
        $"makespan/bound {r.GetProperty("makespanOverBound").GetDouble():0.000}, worst refresh lateness {r.GetProperty("worstRefreshLatenessMs").GetDouble():0.0} ms, " +
        $"worst timer lateness {r.GetProperty("worstTimerLatenessMs").GetDouble():0.0} ms, bystander stall {r.GetProperty("machineStallMs").GetDouble():0.0} ms, " +
        $"thread-pool delay {r.GetProperty("threadPoolDelayMs").GetDouble():0.0} ms";
}
