using System.Collections.Concurrent;
using MassTransit;
using Microsoft.Extensions.DependencyInjection;
using TestSupport.RabbitMq;

namespace PriorityAsync.MassTransit.Tests;

/// <summary>The page's example (docs/rabbitmq.md, PACKAGE.md), configured as shown and run against the real broker.</summary>
public sealed class DocsExampleTests
{
    [RabbitMqFact]
    public async Task Example_HeaderAndMessageType_ChooseTheLevelTheConsumerRunsAt()
    {
        Uri uri = TestBroker.Uri;
        string[] credentials = Uri.UnescapeDataString(uri.UserInfo).Split(':', 2);
        var services = new ServiceCollection();
        services.AddSingleton<ReportLog>();
        await using (PriorityContextThread consumers = Configure(services, uri.Host, (ushort)uri.Port, credentials[0], credentials[1]))
        {
            await using ServiceProvider provider = services.BuildServiceProvider();
            IBusControl bus = provider.GetRequiredService<IBusControl>();
            using var timeout = new CancellationTokenSource(TestBroker.Patience);
            await bus.StartAsync(timeout.Token);
            try
            {
                ISendEndpoint reports = await bus.GetSendEndpoint(new Uri("queue:reports"));
                await reports.Send(new RenderReport("weekly"), c => c.Headers.Set("priority-level", 1), timeout.Token);
                await reports.Send(new RenderReport("archive"), timeout.Token);
                await reports.Send(new CancelReport("weekly"), timeout.Token);
                ReportLog log = provider.GetRequiredService<ReportLog>();
                while (log.Levels.Count < 3)
                {
                    await Task.Delay(10, timeout.Token);
                }

                log.Levels.Should().BeEquivalentTo(new Dictionary<string, int?> { ["render weekly"] = 1, ["render archive"] = 0, ["cancel weekly"] = 2 });
            }
            finally
            {
                await bus.StopAsync(timeout.Token);
            }
        }
    }

    private static PriorityContextThread Configure(IServiceCollection services, string host, ushort port, string user, string password)
    {
        // begin-snippet: masstransit-endpoint
        // Needs: services (an app's IServiceCollection) with MassTransit.RabbitMQ and PriorityAsync.MassTransit; ReportConsumer, CancelReport.
        var consumers = new PriorityContextThread(new PriorityContextOptions { Levels = 3 }); // the consumers' loop, as long as the app runs
        services.AddMassTransit(x =>
        {
            x.AddConsumer<ReportConsumer>();
            x.UsingRabbitMq((context, cfg) =>
            {
                cfg.Host(host, port, "/", h =>
                {
                    h.Username(user);
                    h.Password(password);
                });
                cfg.ReceiveEndpoint("reports", e =>
                {
                    e.PrefetchCount = 50;                     // ConcurrentMessageLimit stays at its default, 50: every delivery reaches the loop
                    e.UsePriorityScheduler(consumers.Context, o =>
                    {
                        o.LevelHeader = "priority-level";     // a header the producer sets (clamped to 0..2), else
                        o.MessageLevel<CancelReport>(2);      // the message type's level, else DefaultLevel (0)
                    });
                    e.ConfigureConsumer<ReportConsumer>(context);
                });
            });
        });
        // end-snippet
        return consumers;
    }
}

/// <summary>Renders a report (the example's long, CPU-bound work).</summary>
public sealed record RenderReport(string Name);

/// <summary>Cancels a report (the example's urgent message).</summary>
public sealed record CancelReport(string Name);

/// <summary>What the example's consumer saw: the level each message ran at.</summary>
public sealed class ReportLog
{
    public ConcurrentDictionary<string, int?> Levels { get; } = new();
}

/// <summary>The example's consumer: notes the level each message runs at (<see cref="Priority.CurrentLevel"/>).</summary>
public sealed class ReportConsumer(ReportLog log) : IConsumer<RenderReport>, IConsumer<CancelReport>
{
    public Task Consume(ConsumeContext<RenderReport> context)
    {
        log.Levels[$"render {context.Message.Name}"] = Priority.CurrentLevel;
        return Task.CompletedTask;
    }

    public Task Consume(ConsumeContext<CancelReport> context)
    {
        log.Levels[$"cancel {context.Message.Name}"] = Priority.CurrentLevel;
        return Task.CompletedTask;
    }
}
