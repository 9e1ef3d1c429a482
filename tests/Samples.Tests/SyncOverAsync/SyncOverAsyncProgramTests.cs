using SyncOverAsync;

namespace Samples.Tests;

/// <summary>The SyncOverAsync sample's entry point.</summary>
public class SyncOverAsyncProgramTests
{
    [Theory]
    [InlineData("--parts", "pool,threads")]
    [InlineData("--duration", "0s")]
    [InlineData("--interval", "2")]
    [InlineData("--latency", "-1ms")]
    [InlineData("--stall-timeout", "1ms")]
    [InlineData("--stall-timeout")]
    [InlineData("--frobnicate")]
    [InlineData("--parts", ",")]
    [InlineData("--duration", "1s", "--duration", "2s")]
    public void Main_BadArguments_PrintsOneLineOnStderrAndExitsWith2(params string[] args)
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Backend).Assembly, args);

        exitCode.Should().Be(2);
        stdout.Should().BeEmpty();
        stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().ContainSingle().Which.Should().StartWith("SyncOverAsync: ");
        stderr.Should().NotContain("Exception").And.NotContain("   at ");
    }

    [Fact]
    public void Main_Version_PrintsTheVersionAndRunsNothing()
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Backend).Assembly, "--version");

        exitCode.Should().Be(0);
        stdout.Should().StartWith("SyncOverAsync ").And.Contain("(PriorityAsync ");
        stdout.TrimEnd().Split('\n').Should().ContainSingle("--version prints the version, and runs nothing");
        stderr.Should().BeEmpty();
    }

    [Fact]
    public void Main_Help_PrintsUsageAndExitsWith0()
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Backend).Assembly, "-h");

        exitCode.Should().Be(0);
        stdout.Should().Contain("--stall-timeout").And.Contain("--parts");
        stderr.Should().BeEmpty();
    }

    [Fact]
    public void Main_LoopAndExceptions_ShowsTheReportTheFixAndTheExceptionsAndExitsWith0()
    {
        (int exitCode, string stdout, _) = EntryPoint.Run(
            typeof(Backend).Assembly, "--parts", "loop,exceptions", "--stall-timeout", "100ms", "--latency", "10ms");

        exitCode.Should().Be(0, stdout);
        stdout.Should().Contain("warn: loop 'requests' stalled: level 1 work has waited at least")
            .And.Contain("released by the report")
            .And.Contain("request served, 0 stall report(s)")
            .And.Contain("AggregateException wrapping InvalidOperationException")
            .And.NotContain("1. The thread pool");
    }
}
