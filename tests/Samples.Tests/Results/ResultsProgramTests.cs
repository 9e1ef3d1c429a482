using Results;

namespace Samples.Tests;

/// <summary>The Results sample's entry point.</summary>
public class ResultsProgramTests
{
    [Theory]
    [InlineData("--sizes", "0")]
    [InlineData("--sizes", "ten")]
    [InlineData("--sizes", ",")]
    [InlineData("--sizes", "10,2000000")]
    [InlineData("--sizes", "10", "--sizes", "20")]
    [InlineData("--variants", ",")]
    [InlineData("--variants", "whenall,parallel")]
    [InlineData("--window", "-1ms")]
    [InlineData("--work", "5")]
    [InlineData("--urgent-every", "0")]
    [InlineData("--whenany-limit")]
    [InlineData("--frobnicate")]
    public void Main_BadArguments_PrintsOneLineOnStderrAndExitsWith2(params string[] args)
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Workload).Assembly, args);

        exitCode.Should().Be(2);
        stdout.Should().BeEmpty();
        stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().ContainSingle().Which.Should().StartWith("Results: ");
        stderr.Should().NotContain("Exception").And.NotContain("   at ");
    }

    [Fact]
    public void Main_Version_PrintsTheVersionAndRunsNothing()
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Workload).Assembly, "--version");

        exitCode.Should().Be(0);
        stdout.Should().StartWith("Results ").And.Contain("(PriorityAsync ");
        stdout.TrimEnd().Split('\n').Should().ContainSingle();
        stderr.Should().BeEmpty("nothing ran: the runs write their progress dots there");
    }

    [Fact]
    public void Main_Help_PrintsUsageAndExitsWith0()
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Workload).Assembly, "--help");

        exitCode.Should().Be(0);
        stdout.Should().Contain("--whenany-limit").And.Contain("--sizes");
        stderr.Should().BeEmpty();
    }

    [Fact]
    public void Main_SmallRun_PrintsARowPerVariantAndSizeAndExitsWith0()
    {
        (int exitCode, string stdout, _) = EntryPoint.Run(
            typeof(Workload).Assembly, "--sizes", "10,300", "--window", "20ms", "--whenany-limit", "10");

        exitCode.Should().Be(0);
        string[] lines = stdout.Split('\n');
        foreach (string variant in new[] { "one by one", "WhenAll", "WhenAny loop", "packed (pool)", "PriorityAsync" })
        {
            lines.Count(l => l.Contains($"  {variant} ", StringComparison.Ordinal)).Should().Be(2, variant);
        }

        lines.Should().ContainSingle(l => l.Contains("  WhenAny loop    not run", StringComparison.Ordinal))
            .Which.Should().Contain("extrapolated");
        lines.Where(l => l.Contains("  PriorityAsync ", StringComparison.Ordinal)).Should().OnlyContain(l => l.Contains("  0 of ", StringComparison.Ordinal));
    }
}
