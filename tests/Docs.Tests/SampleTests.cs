using System.Globalization;
using System.Reflection;
using HostingGettingStarted;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.Hosting;

namespace Docs.Tests;

/// <summary>The samples whose code the README and the guides quote do what the text says they do.</summary>
public sealed class SampleTests
{
    [Fact]
    public void Quickstart_Run_AccountsForEveryMessageInTheREADMEsWords()
    {
        // What holds at any load: every message ends completed or lost, once, and the line is the README's. Its "0 lost" is a
        // wall-clock outcome (a lease of 1 s renewed every 250 ms, with 100 ms CPU parts: a machine that kept the loop thread off
        // the CPU for the rest of a second would lose one), so it is not asserted here; the same protocol is proven on virtual time
        // in tests/LeaseWorker.Tests (ScenarioTests).
        (int exit, string output) = OwnThread.RunEntryPoint(Assembly.Load(new AssemblyName("Quickstart")));

        exit.Should().Be(0);
        System.Text.RegularExpressions.Match line = System.Text.RegularExpressions.Regex.Match(output, @"^(\d+) messages completed, (\d+) lost\n$");
        line.Success.Should().BeTrue($"the README's line, got: {output}");
        (int.Parse(line.Groups[1].Value, CultureInfo.InvariantCulture) + int.Parse(line.Groups[2].Value, CultureInfo.InvariantCulture))
            .Should().Be(5, "each of the 5 messages is completed or lost, once");
    }

    [Fact]
    public void GettingStarted_Run_StepsInOrderAtLevel1AndTheLeaseOnceAtLevel2AfterStep0_ThenWhatTheGuideSays()
    {
        (int exit, string output) = OwnThread.RunEntryPoint(Assembly.Load(new AssemblyName("GettingStarted")));

        exit.Should().Be(0);
        string[] lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        lines.Skip(1).Should().Equal(
            "On the loop thread at level 1; a task from GetTaskFactory(2) ran at level 2.",
            "A post after the context finished was reported: level 1, PostedAfterCompletion.");

        // The guide's first line is "step 0 at level 1 | lease refreshed at level 2 | step 1 at level 1 | step 2 at level 1": the
        // lease timer (100 ms) falls due during step 0 (300 ms of CPU) and runs at the checkpoint after it. What holds at any load: the
        // steps in order at level 1, step 0 first (nothing can interrupt it, and the timer is armed before it starts), the lease once,
        // at level 2, after it. Whether the timer is found due by the end of step 0 depends on the process-wide alarm thread getting a
        // core within those 200 ms, a wall-clock outcome.
        string[] parts = lines[0].Split(" | ");
        parts.Where(p => p.StartsWith("step", StringComparison.Ordinal)).Should().Equal("step 0 at level 1", "step 1 at level 1", "step 2 at level 1");
        parts.Should().ContainSingle(p => p == "lease refreshed at level 2");
        parts[0].Should().Be("step 0 at level 1");
    }

    [Fact]
    public async Task HostingGettingStarted_Worker_HeartbeatsAtLevel2BetweenCpuBlocksAndStops()
    {
        var logs = new CapturingLoggerProvider();
        HostApplicationBuilder builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders().AddProvider(logs);
        builder.Services.AddPriorityWorker<Worker>();
        using IHost host = builder.Build();

        await host.StartAsync();
        IReadOnlyList<string> heartbeats = await logs.WaitForAsync(m => m.StartsWith("Heartbeat", StringComparison.Ordinal), count: 2).Within("two heartbeats");
        await host.StopAsync().Within("the worker stopping");

        heartbeats.Should().AllBe("Heartbeat at level 2", "the guide says the heartbeat runs at level 2, ahead of the CPU-bound level-0 work");
        host.Services.GetServices<IHostedService>().OfType<Worker>().Single().ExecuteTask!.IsCompletedSuccessfully.Should().BeTrue();
    }
}
