using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

public sealed class PriorityWorkersHealthCheckTests
{
    private const string Section = "PriorityAsync:Workers:ScriptedWorker";

    [Fact]
    public async Task CheckHealth_LoopBlockedWhileWorkWaits_UnhealthyWithAStallLogUntilTheLoopMovesAgain()
    {
        var logs = new TestLoggerProvider();
        using var release = new ManualResetEventSlim();
        var blocking = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                blocking.SetResult();
                release.Wait(Infrastructure.TaskExtensions.Timeout, CancellationToken.None).Should().BeTrue("the test releases the loop");
                await Task.Delay(Timeout.Infinite, token);
            },
            configuration: new() { [$"{Section}:StallTimeout"] = "00:00:00.050" });
        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        HealthCheckService health = host.Services.GetRequiredService<HealthCheckService>();
        await blocking.Task.Within("the loop to block");
        (await health.CheckHealthAsync()).Status.Should().Be(HealthStatus.Healthy, "nothing waits yet");

        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        worker.PriorityContext.GetSynchronizationContext(2).Post(_ => ran.SetResult(), null);
        LogEntry stall = await logs.WaitForAsync(e => e.EventId.Id == PriorityWorkerEventIds.StallDetected.Id, "the stall to be logged");
        HealthReport during = await health.CheckHealthAsync();

        stall.Level.Should().Be(LogLevel.Warning);
        stall.Values["Level"].Should().Be(2);
        ((long)stall.Values["WaitingMilliseconds"]!).Should().BeGreaterThanOrEqualTo(50);
        during.Status.Should().Be(HealthStatus.Unhealthy);
        during.Entries["priority-workers"].Description.Should().Contain("ScriptedWorker: stalled");

        release.Set();
        await ran.Task.Within("the waiting item to run");
        (await health.CheckHealthAsync()).Status.Should().Be(HealthStatus.Healthy, "the loop has started an item since the stall");
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public async Task CheckHealth_BacklogAboveThreshold_DegradedWithTheLevelAndCount()
    {
        var logs = new TestLoggerProvider();
        using var release = new ManualResetEventSlim();
        var blocking = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                blocking.SetResult();
                release.Wait(Infrastructure.TaskExtensions.Timeout, CancellationToken.None).Should().BeTrue("the test releases the loop");
                await Task.Delay(Timeout.Infinite, token);
            },
            configuration: new() { [$"{Section}:StallTimeout"] = "", [$"{Section}:BacklogDegradedThreshold"] = "2" });
        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        HealthCheckService health = host.Services.GetRequiredService<HealthCheckService>();
        await blocking.Task.Within("the loop to block");

        int ran = 0;
        var allRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void Post() => worker.PriorityContext.GetSynchronizationContext(1).Post(_ =>
        {
            if (++ran == 3)
            {
                allRan.SetResult();
            }
        }, null);
        Post();
        Post();
        HealthReport atThreshold = await health.CheckHealthAsync();
        Post();
        HealthReport above = await health.CheckHealthAsync();

        atThreshold.Status.Should().Be(HealthStatus.Healthy);
        above.Status.Should().Be(HealthStatus.Degraded);
        HealthReportEntry entry = above.Entries["priority-workers"];
        entry.Description.Should().Contain("3 callbacks waiting at level 1 (threshold 2)");
        entry.Data["ScriptedWorker.pending"].Should().BeEquivalentTo(new[] { 0, 3, 0 });

        release.Set();
        await allRan.Task.Within("the backlog to drain");
        (await health.CheckHealthAsync()).Status.Should().Be(HealthStatus.Healthy);
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public async Task CheckHealth_LoopFaultedUnderIgnore_Unhealthy()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                ThrowLater();
                await Task.Delay(Timeout.Infinite, token);

                async void ThrowLater()
                {
                    await Task.Yield();
                    throw new InvalidOperationException("loop boom");
                }
            },
            more: b => b.Services.Configure<HostOptions>(o => o.BackgroundServiceExceptionBehavior = BackgroundServiceExceptionBehavior.Ignore));
        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        await worker.ExecuteTask!.ContinueWith(_ => { }, TaskScheduler.Default).Within("the worker to fail");

        HealthReport report = await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();

        report.Status.Should().Be(HealthStatus.Unhealthy);
        report.Entries["priority-workers"].Description.Should().Contain("ScriptedWorker: loop faulted");
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public async Task CheckHealth_NoWorkerStarted_Healthy()
    {
        var check = new PriorityWorkersHealthCheck([]);

        HealthCheckResult result = await check.CheckHealthAsync(new HealthCheckContext());

        result.Status.Should().Be(HealthStatus.Healthy);
    }
}
