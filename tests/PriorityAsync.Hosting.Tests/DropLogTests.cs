using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

/// <summary>The WorkDropped warning, seen through a real host: rate-limited, counted per level, nothing lost at stop.</summary>
public sealed class DropLogTests
{
    private const string Section = "PriorityAsync:Workers:ScriptedWorker";

    [Fact]
    public async Task WorkDropped_PostsAfterTheLoopFinished_FirstLoggedAtOnceTheRestTogetherAtStop()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            (worker, token) => Task.CompletedTask,
            configuration: new() { [$"{Section}:WorkDroppedLogInterval"] = "01:00:00" });
        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        await worker.ExecuteTask!.Within("ExecuteAsync and the loop to finish");

        worker.PriorityContext.GetSynchronizationContext(1).Post(_ => { }, null);
        logs.Entries.Where(IsWorkDropped).Should().ContainSingle("the first drop is logged at once");
        worker.PriorityContext.GetSynchronizationContext(1).Post(_ => { }, null);
        worker.PriorityContext.GetSynchronizationContext(0).Post(_ => { }, null);
        worker.PriorityContext.GetSynchronizationContext(2).Post(_ => { }, null);
        logs.Entries.Where(IsWorkDropped).Should().ContainSingle("later drops wait for the interval");
        await host.StopAsync().Within("host stop");

        LogEntry[] entries = logs.Entries.Where(IsWorkDropped).ToArray();
        entries.Should().HaveCount(2);
        entries.Should().OnlyContain(e => e.Level == LogLevel.Warning);
        entries.Select(e => (long)e.Values["Count"]!).Should().Equal(1, 3);
        entries[0].Values["PerLevel"].Should().Be("level 1: 1");
        entries[1].Values["PerLevel"].Should().Be("level 2: 1, level 1: 1, level 0: 1");
    }

    [Fact]
    public async Task WorkDropped_IntervalEnds_TheCountedDropsAreLoggedWithoutAStop()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            (worker, token) => Task.CompletedTask,
            configuration: new() { [$"{Section}:WorkDroppedLogInterval"] = "00:00:00.050" });
        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        await worker.ExecuteTask!.Within("ExecuteAsync and the loop to finish");

        for (int i = 0; i < 5; i++)
        {
            worker.PriorityContext.GetSynchronizationContext(0).Post(_ => { }, null);
        }

        await logs.WaitForAsync(
            _ => logs.Entries.Where(IsWorkDropped).Sum(e => (long)e.Values["Count"]!) == 5,
            "all five drops to be logged by the interval's timer");
        logs.Entries.Where(IsWorkDropped).Should().HaveCountLessThanOrEqualTo(5);
        await host.StopAsync().Within("host stop");
        logs.Entries.Where(IsWorkDropped).Sum(e => (long)e.Values["Count"]!).Should().Be(5, "nothing is logged twice");
    }

    private static bool IsWorkDropped(LogEntry e)
        => e.EventId.Id == PriorityWorkerEventIds.WorkDropped.Id && e.Category == PriorityWorkerServiceCollectionExtensions.LogCategory;
}
