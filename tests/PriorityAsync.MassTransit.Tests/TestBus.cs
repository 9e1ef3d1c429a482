using MassTransit;
using Microsoft.Extensions.DependencyInjection;
using TestSupport.RabbitMq;

namespace PriorityAsync.MassTransit.Tests;

/// <summary>A MassTransit bus on the tests' RabbitMQ, with one receive endpoint (a queue of its own) running <see cref="ProbeConsumer"/>.</summary>
internal sealed class TestBus : IAsyncDisposable
{
    private readonly ServiceProvider _provider;

    private TestBus(ServiceProvider provider, IBusControl bus, string queue)
    {
        _provider = provider;
        Bus = bus;
        Queue = queue;
    }

    public IBusControl Bus { get; }

    public string Queue { get; }

    /// <summary>Starts a bus whose endpoint <paramref name="configure"/> sets up; the consumer is added after it (DI's scope factory).</summary>
    public static async Task<TestBus> StartAsync(Recorder recorder, Action<IRabbitMqReceiveEndpointConfigurator> configure, Action<IConsumerConfigurator<ProbeConsumer>>? consumer = null)
    {
        string queue = TestBroker.NewQueueName("mt");
        var services = new ServiceCollection();
        services.AddSingleton(recorder);
        services.AddMassTransit(x =>
        {
            x.AddConsumer<ProbeConsumer>();
            x.UsingRabbitMq((context, cfg) =>
            {
                Uri uri = TestBroker.Uri;
                string[] user = Uri.UnescapeDataString(uri.UserInfo).Split(':', 2);
                cfg.Host(uri.Host, (ushort)uri.Port, "/", h =>
                {
                    h.Username(user[0]);
                    h.Password(user[1]);
                });
                cfg.ReceiveEndpoint(queue, e =>
                {
                    configure(e);
                    e.ConfigureConsumer(context, consumer);
                });
            });
        });
        ServiceProvider provider = services.BuildServiceProvider();
        IBusControl bus = provider.GetRequiredService<IBusControl>();
        using var timeout = new CancellationTokenSource(TestBroker.Patience);
        await bus.StartAsync(timeout.Token);
        return new TestBus(provider, bus, queue);
    }

    public async Task SendAsync<T>(T message, Action<SendContext<T>>? configure = null)
        where T : class
    {
        using var timeout = new CancellationTokenSource(TestBroker.Patience);
        ISendEndpoint endpoint = await Bus.GetSendEndpoint(new Uri($"queue:{Queue}"));
        await endpoint.Send(message, context => configure?.Invoke(context), timeout.Token);
    }

    public async ValueTask DisposeAsync()
    {
        using var timeout = new CancellationTokenSource(TestBroker.Patience);
        await Bus.StopAsync(timeout.Token);
        await _provider.DisposeAsync();
    }
}
