using System.IO;
using System.Reflection;
using System.Text.Json;

namespace LeaseWorker.Tests;

/// <summary>The program's real entry point (the top-level statements of Program.cs), run in-process with Console redirected.</summary>
public class ProgramTests
{
    [Theory]
    [InlineData("--messages", "0")]
    [InlineData("--cpu", "-1s")]
    [InlineData("--io", "-5ms")]
    [InlineData("--modes", "single,asyncio")]
    [InlineData("--lease", "1s")]
    [InlineData("--time-scale", "0.0001")]
    [InlineData("--frobnicate")]
    [InlineData("--starve-pool", "-1")]
    [InlineData("--starve-pool", "257")]
    [InlineData("--starve-pool", "two")]
    [InlineData("--time-scale", "1e308")]
    [InlineData("--trace", "")]
    public void Main_BadArguments_PrintsOneLineOnStderrAndExitsWith2(params string[] args)
    {
        (int exitCode, string stdout, string stderr) = RunMain(args);

        exitCode.Should().Be(2);
        stdout.Should().BeEmpty();
        string[] lines = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        lines.Should().ContainSingle().Which.Should().StartWith("LeaseWorker: ");
        stderr.Should().NotContain("Exception").And.NotContain("   at ");
    }

    [Fact]
    public void Main_Help_PrintsUsageAndExitsWith0()
    {
        (int exitCode, string stdout, string stderr) = RunMain(["--help"]);

        exitCode.Should().Be(0);
        stdout.Should().Contain("--time-scale").And.Contain("--checkpoint");
        stderr.Should().BeEmpty();
    }

    [Fact]
    public void Main_Version_PrintsTheSampleAndPriorityAsyncVersionsAndExitsWith0()
    {
        (int exitCode, string stdout, string stderr) = RunMain(["--version"]);

        exitCode.Should().Be(0);
        stdout.Should().StartWith("LeaseWorker ").And.Contain("(PriorityAsync ");
        stdout.TrimEnd().Split('\n').Should().ContainSingle("--version prints the version, and runs nothing");
        stderr.Should().BeEmpty();
    }

    [Fact]
    public void Main_Json_PrintsOneResultPerModeForScripts()
    {
        (int exitCode, string stdout, string stderr) = RunMain(
            ["--messages", "2", "--steps", "2", "--time-scale", "0.01", "--json"]);

        exitCode.Should().Be(0, stderr);
        using JsonDocument json = JsonDocument.Parse(stdout);
        JsonElement results = json.RootElement.GetProperty("results");
        results.EnumerateArray().Select(r => r.GetProperty("mode").GetString())
            .Should().Equal("threadpool", "single", "seed-prioritize", "priority");
        foreach (JsonElement r in results.EnumerateArray())
        {
            // What the bus counted, under "bus"; every duration in seconds.
            JsonElement bus = r.GetProperty("bus");
            (bus.GetProperty("succeeded").GetInt32() + bus.GetProperty("lost").GetInt32()).Should().Be(bus.GetProperty("received").GetInt32());
            bus.GetProperty("received").GetInt32().Should().Be(2);
            bus.GetProperty("worstRefreshLateness").ValueKind.Should().Be(JsonValueKind.Number);
            r.GetProperty("makespan").GetDouble().Should().BePositive();
            r.GetProperty("bound").GetDouble().Should().BePositive();
            r.GetProperty("makespanOverBound").GetDouble().Should().BeApproximately(r.GetProperty("makespan").GetDouble() / r.GetProperty("bound").GetDouble(), 1e-3);
            r.GetProperty("cpuTime").ValueKind.Should().Be(JsonValueKind.Number);
            r.GetProperty("peakThreads").GetInt32().Should().BePositive();
            r.GetProperty("worstTimerLateness").ValueKind.Should().Be(JsonValueKind.Number);
        }

        JsonElement settings = json.RootElement.GetProperty("settings");
        (settings.GetProperty("timeScale").GetDouble(), settings.GetProperty("cpu").GetDouble(), settings.GetProperty("cpuKind").GetString())
            .Should().Be((0.01, 1.0, "sleep"), "the settings are in the article's time");
        settings.GetProperty("checkpoint").ValueKind.Should().Be(JsonValueKind.Null);
        json.RootElement.GetProperty("baselineNote").GetString().Should().Contain("Nito.AsyncEx");
    }

    [Fact]
    public void Main_VirtualTime_TableOfTheSingleThreadModesWithExactTimes()
    {
        (int exitCode, string stdout, string stderr) = RunMain(["--virtual-time", "--messages", "12", "--steps", "10"]);

        exitCode.Should().Be(0, stderr);
        string[] lines = stdout.ReplaceLineEndings("\n").Split('\n');
        lines.Should().OnlyContain(l => l.Length <= 120);
        stdout.Should().Contain("On virtual time").And.Contain("virtual time until every message was finished or lost");
        lines.Should().Contain(l => l.StartsWith("single ", StringComparison.Ordinal) && l.Contains("11 of 12") && l.Contains("45.500 s"));
        lines.Should().Contain(l => l.StartsWith("priority ", StringComparison.Ordinal) && l.Contains("0 of 12") && l.Contains("124.250 s"));
        lines.Should().NotContain(l => l.StartsWith("threadpool ", StringComparison.Ordinal));
    }

    [Fact]
    public void Main_DefaultTable_FitsIn120ColumnsAndSaysWhatTheExperimentIs()
    {
        (int exitCode, string stdout, _) = RunMain(["--messages", "2", "--steps", "2", "--time-scale", "0.01"]);

        exitCode.Should().Be(0);
        string[] lines = stdout.ReplaceLineEndings("\n").Split('\n');
        lines.Should().OnlyContain(l => l.Length <= 120, "the default output reads in a 120-column terminal");
        stdout.Should().Contain("The lease-worker experiment of the article \"Async Wandering, part 15\"")
            .And.Contain("lost").And.Contain("took").And.Contain("vs least possible").And.Contain("latest refresh").And.Contain("--wide");
        foreach (string mode in CommandLine.AllModes)
        {
            lines.Should().Contain(l => l.StartsWith(mode + " ", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void Main_Wide_HasOneRowPerModeWithEveryColumn()
    {
        (int exitCode, string stdout, _) = RunMain(["--messages", "2", "--steps", "2", "--time-scale", "0.01", "--modes", "single,priority", "--wide"]);

        exitCode.Should().Be(0);
        stdout.Should().Contain("received").And.Contain("succeeded").And.Contain("lost").And.Contain("makespan")
            .And.Contain("CPU bound").And.Contain("makespan/bound").And.Contain("CPU time").And.Contain("peak threads")
            .And.Contain("worst refresh lateness").And.Contain("worst timer lateness").And.Contain("Nito.AsyncEx");
        stdout.Split('\n').Should().Contain(l => l.StartsWith("single ", StringComparison.Ordinal))
            .And.Contain(l => l.StartsWith("priority ", StringComparison.Ordinal));
    }

    private static (int ExitCode, string Stdout, string Stderr) RunMain(string[] args)
    {
        MethodInfo entry = typeof(Settings).Assembly.EntryPoint!;
        TextWriter previousOut = Console.Out;
        TextWriter previousError = Console.Error;
        var stdout = new StringWriter();
        var stderr = new StringWriter();
        Console.SetOut(stdout);
        Console.SetError(stderr);
        try
        {
            object? exit = entry.Invoke(null, [args]);
            return ((int)exit!, stdout.ToString(), stderr.ToString());
        }
        finally
        {
            Console.SetOut(previousOut);
            Console.SetError(previousError);
        }
    }
}
