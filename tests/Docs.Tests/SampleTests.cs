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
    public void Quickstart_Run_CompletesEveryMessageAndLosesNoLease()
    {
        (int exit, string output) = OwnThread.RunEntryPoint(typeof(InMemoryBus).Assembly);

        exit.Should().Be(0);
        output.Should().Be("5 messages completed, 0 lost\n", "the README says so: every renewal runs ahead of the processing");
    }

    [Fact]
    public void GettingStarted_Run_PrintsWhatTheGuideSays()
    {
        (int exit, string output) = OwnThread.RunEntryPoint(Assembly.Load(new AssemblyName("GettingStarted")));

        exit.Should().Be(0);
        output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().Equal(
            "step 0 at level 1 | lease refreshed at level 2 | step 1 at level 1 | step 2 at level 1",
            "On the loop thread at level 1; a task from GetTaskFactory(2) ran at level 2.",
            "A post after the context finished was reported: level 1, PostedAfterCompletion.");
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
