using System.Threading.Channels;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Hosting.Internal;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

// The example of docs/hosting.md and docs/testing.md ("A hosted worker"), compiled and run here: a worker's loop timers run on the
// TimeProvider registered in the host's services, so a test moves a hosted worker's time on with FakeTimeProvider.Advance.

/// <summary>What a heartbeat worker sends its heartbeats to.</summary>
public interface IHeartbeatSender
{
    /// <summary>Sends one heartbeat.</summary>
    Task SendAsync(CancellationToken cancellationToken);
}

// begin-snippet: hosting-fake-clock-worker
// Needs: the PriorityAsync.Hosting package (using PriorityAsync; using PriorityAsync.Hosting;) and IHeartbeatSender.
/// <summary>Sends a heartbeat every 30 seconds, on the loop's own timer.</summary>
public sealed class HeartbeatWorker(IHeartbeatSender sender) : PriorityBackgroundService
{
    public static readonly TimeSpan Period = TimeSpan.FromSeconds(30);

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        await Context.Prioritize(2);
        while (!stoppingToken.IsCancellationRequested)
        {
            // The period starts before the send, so a slow send does not shift the beats. Priority.Delay is a loop timer: it runs
            // on the TimeProvider registered in the host's services (TimeProvider.System when there is none).
            ValueTask period = Priority.Delay(Period, stoppingToken);
            await sender.SendAsync(stoppingToken);
            await period;
        }
    }
}
// end-snippet

/// <summary><see cref="HeartbeatWorker"/> on a <see cref="PriorityThreadPool"/>: the same code, the same clock.</summary>
public sealed class HeartbeatPoolWorker(IHeartbeatSender sender) : PriorityThreadPoolBackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        await Priority.Prioritize(2);
        while (!stoppingToken.IsCancellationRequested)
        {
            ValueTask period = Priority.Delay(HeartbeatWorker.Period, stoppingToken);
            await sender.SendAsync(stoppingToken);
            await period;
        }
    }
}

// begin-snippet: hosting-fake-clock-sender
// Needs: a test project (using System.Threading.Channels;) with the worker above.
/// <summary>A test's sender: each heartbeat, with the fake clock's time, on a channel the test reads.</summary>
public sealed class RecordingSender(TimeProvider clock) : IHeartbeatSender
{
    private readonly Channel<DateTimeOffset> _sent = Channel.CreateUnbounded<DateTimeOffset>();

    public ChannelReader<DateTimeOffset> Sent => _sent.Reader;

    public Task SendAsync(CancellationToken cancellationToken)
    {
        _sent.Writer.TryWrite(clock.GetUtcNow());
        return Task.CompletedTask;
    }
}
// end-snippet

public sealed class FakeClockDocsTests
{
    // begin-snippet: hosting-fake-clock-test
    // Needs: an xunit test class; Microsoft.Extensions.TimeProvider.Testing (FakeTimeProvider), Hosting and the two above.
    [Fact]
    public async Task HeartbeatWorker_BeatsEveryThirtySeconds_WithoutWaitingThirtySeconds()
    {
        var clock = new FakeTimeProvider();
        var sender = new RecordingSender(clock);
        HostApplicationBuilder builder = Host.CreateApplicationBuilder();
        builder.Services.AddSingleton<TimeProvider>(clock); // the workers' loop timers run on it
        builder.Services.AddSingleton<IHeartbeatSender>(sender);
        builder.Services.AddPriorityWorker<HeartbeatWorker>();
        using IHost host = builder.Build();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10)); // a hung test fails instead of waiting forever
        await host.StartAsync(timeout.Token);

        DateTimeOffset start = clock.GetUtcNow();
        var sent = new List<DateTimeOffset>();
        for (int i = 0; i < 3; i++)
        {
            // Each beat has armed the next period before it was sent: the test may move the clock on once it has the beat.
            sent.Add(await sender.Sent.ReadAsync(timeout.Token));
            clock.Advance(HeartbeatWorker.Period); // the delay fires on the worker's loop now, not 30 s from now
        }

        await host.StopAsync(timeout.Token);
        sent.Should().Equal(start, start + HeartbeatWorker.Period, start + 2 * HeartbeatWorker.Period);
    }
    // end-snippet

    [Fact]
    public async Task HeartbeatPoolWorker_FakeTimeProviderRegistered_ItsPoolTimersFireWhenTheClockIsAdvanced()
    {
        var clock = new FakeTimeProvider();
        var sender = new RecordingSender(clock);
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Services.AddSingleton<TimeProvider>(clock);
        builder.Services.AddSingleton<IHeartbeatSender>(sender);
        builder.Services.AddPriorityThreadPoolWorker<HeartbeatPoolWorker>(o => o.ThreadCount = 2);
        using IHost host = builder.Build();
        await host.StartAsync().Within("host start");

        DateTimeOffset start = clock.GetUtcNow();
        var sent = new List<DateTimeOffset>();
        for (int i = 0; i < 3; i++)
        {
            sent.Add(await sender.Sent.ReadAsync().AsTask().Within($"heartbeat {i}"));
            clock.Advance(HeartbeatWorker.Period);
        }

        await host.StopAsync().Within("host stop");
        sent.Should().Equal(start, start + HeartbeatWorker.Period, start + 2 * HeartbeatWorker.Period);
    }

    [Fact]
    public async Task HeartbeatWorker_NoTimeProviderRegistered_ItsLoopTimersRunOnTheSystemClock()
    {
        var sender = new RecordingSender(TimeProvider.System);
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Services.AddSingleton<IHeartbeatSender>(sender);
        builder.Services.AddPriorityWorker<HeartbeatWorker>();
        using IHost host = builder.Build();
        await host.StartAsync().Within("host start");
        await sender.Sent.ReadAsync().AsTask().Within("the first heartbeat");
        HeartbeatWorker worker = host.Services.GetServices<IHostedService>().OfType<HeartbeatWorker>().Single();

        ((IPriorityWorker)worker).Core.TimeProvider.Should().BeSameAs(TimeProvider.System);
        await host.StopAsync().Within("host stop");
    }
}
