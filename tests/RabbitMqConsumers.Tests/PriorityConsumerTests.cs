using System.Collections.Concurrent;
using System.Text;
using PriorityAsync;
using RabbitMQ.Client;
using TestSupport.RabbitMq;

namespace RabbitMqConsumers.Tests;

public sealed class PriorityConsumerTests
{
    /// <summary>
    /// The promise: a delivery of a higher level overtakes the deliveries of the prefetch already waiting on the loop, where a plain
    /// consumer would run them in arrival order. The loop is held until all of them wait on it, so the levels alone decide the order.
    /// </summary>
    [RabbitMqFact]
    public async Task UrgentDeliveryBehindQueuedDeliveries_RunsFirst_AndEveryOneIsAcked()
    {
        string queue = TestBroker.NewQueueName("consumer");
        var factory = new ConnectionFactory { Uri = TestBroker.Uri };
        await using IConnection connection = await factory.CreateConnectionAsync();
        await using IChannel publisher = await connection.CreateChannelAsync(new CreateChannelOptions(true, true));
        await Rabbit.DeclareAsync(publisher, queue);
        await using var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        using var release = new ManualResetEventSlim();
        var order = new ConcurrentQueue<string>();
        await using IChannel channel = await connection.CreateChannelAsync();
        await channel.BasicQosAsync(0, 16, global: false);
        var consumer = new PriorityConsumer(channel, thread.Context, PriorityConsumer.LevelFromPriority(2, Rabbit.MaxPriority), d =>
        {
            order.Enqueue(Encoding.UTF8.GetString(d.Body));
            return Task.CompletedTask;
        });
        Task held = thread.Context.InvokeAsync(() =>
        {
#pragma warning disable PA0002 // the test holds the loop on purpose, until every delivery waits on it
            release.Wait(TestBroker.Patience);
#pragma warning restore PA0002
            return Task.CompletedTask;
        }, level: 1);
        await channel.BasicConsumeAsync(queue, autoAck: false, consumer);

        for (int i = 1; i <= 5; i++)
        {
            await publisher.BasicPublishAsync("", queue, false, new BasicProperties { Priority = 0 }, Encoding.UTF8.GetBytes($"low {i}"));
        }

        await WaitAsync(() => consumer.InFlight == 5);
        await publisher.BasicPublishAsync("", queue, false, new BasicProperties { Priority = Rabbit.MaxPriority }, Encoding.UTF8.GetBytes("urgent"));
        await WaitAsync(() => consumer.InFlight == 6);
        release.Set();
        await held;
        await WaitAsync(() => consumer.Completed == 6);

        order.Should().Equal("urgent", "low 1", "low 2", "low 3", "low 4", "low 5");
        (await publisher.QueueDeclarePassiveAsync(queue)).MessageCount.Should().Be(0);
        await publisher.QueueDeleteAsync(queue);
    }

    private static async Task WaitAsync(Func<bool> condition)
    {
        using var timeout = new CancellationTokenSource(TestBroker.Patience);
        while (!condition())
        {
            await Task.Delay(5, timeout.Token);
        }
    }
}
