using System.IO;
using System.Reflection;
using PriorityAsync;

namespace LeaseWorker.Tests;

/// <summary><c>--saturate</c> and <c>--policy</c>: parsing, bad input, and what each policy does to the lowest level under a bulk load
/// that never empties. No timing assertions: counts from one run (how often the lowest level ran under the bulk), and the policy each
/// run used.</summary>
public class SaturationTests
{
    [Fact]
    public void TryParse_SaturateAndPolicy_AreApplied()
    {
        CommandLine.TryParse(["--saturate", "30s", "--policy", "aging,shares"], out Options? options, out string? error).Should().BeTrue(error);

        options!.Saturate.Should().Be(TimeSpan.FromSeconds(30));
        options.Policies.Should().Equal("aging", "shares");
    }

    [Fact]
    public void TryParse_SaturateAlone_RunsEveryPolicy()
    {
        CommandLine.TryParse(["--saturate=5s"], out Options? options, out string? error).Should().BeTrue(error);

        options!.Policies.Should().BeNull("null means all three");
        Saturation.AllPolicies.Should().Equal("strict", "aging", "shares");
    }

    [Theory]
    [InlineData("--saturate", "0s")]
    [InlineData("--saturate", "-1s")]
    [InlineData("--saturate", "soon")]
    [InlineData("--saturate", "5s", "--policy", "fifo")]
    [InlineData("--saturate", "5s", "--policy", ",")]
    [InlineData("--policy", "aging")]
    public void Main_BadSaturationArguments_PrintsOneLineOnStderrAndExitsWith2(params string[] args)
    {
        (int exitCode, string stdout, string stderr) = RunMain(args);

        exitCode.Should().Be(2);
        stdout.Should().BeEmpty();
        stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().ContainSingle().Which.Should().StartWith("LeaseWorker: ");
    }

    [Fact]
    public void CreatePolicy_GivesEachNamedPolicy()
    {
        var settings = new Settings();
        Saturation.CreatePolicy("strict", settings).Should().BeSameAs(PriorityPolicy.Strict);
        Saturation.CreatePolicy("aging", settings).Should().BeOfType<AgingPriorityPolicy>()
            .Which.MaxWaitPerLevel.Should().AllBeEquivalentTo(settings.Scaled(Saturation.AgingBound));
        Saturation.CreatePolicy("shares", settings).Should().BeOfType<WeightedSharesPriorityPolicy>()
            .Which.SharesPerLevel.Should().Equal(Saturation.Shares);
    }

    [Fact]
    public void Run_UnderEachPolicy_StrictStarvesTheLowestLevelAndTheOthersDoNot()
    {
        // 20 s of seed time at scale 0.1 (2 s as run), bulk slices of 10 ms as run: 20 times aging's bound of 100 ms as run.
        var settings = new Settings { TimeScale = 0.1, Checkpoint = TimeSpan.FromMilliseconds(100) };
        TimeSpan saturation = TimeSpan.FromSeconds(20);

        Saturation.Result strict = Saturation.Run("strict", settings, saturation);
        Saturation.Result aging = Saturation.Run("aging", settings, saturation);
        Saturation.Result shares = Saturation.Run("shares", settings, saturation);

        strict.LowestRunsUnderBulk.Should().Be(0, "strict priority never runs the lowest level while the bulk level holds work");
        aging.LowestRunsUnderBulk.Should().BeGreaterThan(0, "aging runs the lowest level once its bound has passed");
        shares.LowestRunsUnderBulk.Should().BeGreaterThan(aging.LowestRunsUnderBulk, "shares give the lowest level a part of the run time, not one item per bound");
        strict.LowestWorstWait.Should().BeGreaterThan(aging.LowestWorstWait, "the same load, one run: strict's one lowest item waits for the whole saturation");
        (strict.Description, aging.Description, shares.Description).Should().Be(("Strict", "Aging(100 ms, 100 ms, 100 ms)", "WeightedShares(1:4:16)"));
    }

    [Fact]
    public void Write_HasOneRowPerPolicyAndEveryColumn()
    {
        var settings = new Settings();
        var results = new[]
        {
            new Saturation.Result("strict", "Strict", 0, TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(30), 14, TimeSpan.FromMilliseconds(90), 0.99, TimeSpan.FromMilliseconds(100)),
            new Saturation.Result("aging", "Aging(100 ms, 100 ms, 100 ms)", 27, TimeSpan.FromSeconds(1.1), TimeSpan.FromSeconds(1), 14, TimeSpan.FromMilliseconds(95), 0.99, TimeSpan.FromMilliseconds(100)),
        };
        var output = new StringWriter();

        Saturation.Write(output, settings, TimeSpan.FromSeconds(30), results);

        string text = output.ToString();
        text.Should().Contain("| Strict | 0 | 30 s |").And.Contain("| Aging(100 ms, 100 ms, 100 ms) | 27 | 1.1 s |")
            .And.Contain("lowest level: runs under the bulk").And.Contain("lease level: worst wait").And.Contain("longest bulk slice");
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
