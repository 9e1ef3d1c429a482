using System;
using System.Collections.Generic;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using MessageBus.RabbitMq;
using PriorityAsync;
using RabbitMQ.Client;

namespace RabbitMqConsumers;

/// <summary>
/// <c>--drain QUEUE</c>: a worker process. It consumes the durable priority queue on a <see cref="PriorityContext"/>
/// (<see cref="PriorityConsumer"/>), writes <c>handled ID REDELIVERED</c> for each message before acknowledging it, and exits 0
/// once the queue has been empty, with nothing in flight, for a second. The client recovers its connection and consumer by itself
/// when the server closes the connection or restarts; the tests kill it, the broker and its connection to show what is kept.
/// </summary>
public static class Worker
{
    public static async Task<int> DrainAsync(ConnectionFactory factory, string queue, ushort prefetch, TimeSpan work)
    {
        factory.AutomaticRecoveryEnabled = true;          // the client reconnects, reopens its channels and consumers
        factory.TopologyRecoveryEnabled = true;
        factory.NetworkRecoveryInterval = TimeSpan.FromMilliseconds(500);
        // begin-snippet: rabbitmq-priority-consumer
        // Needs: samples/RabbitMqConsumers (PriorityConsumer, Rabbit, RabbitMqConnection), a ConnectionFactory named factory, queue, prefetch and work.
        await using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using IConnection connection = await RabbitMqConnection.ConnectAsync(factory, "RabbitMqConsumers worker");
        await using IChannel channel = await connection.CreateChannelAsync();
        await channel.QueueDeclareAsync(queue, durable: true, exclusive: false, autoDelete: false,
            arguments: new Dictionary<string, object?> { ["x-max-priority"] = (int)Rabbit.MaxPriority });
        await channel.BasicQosAsync(0, prefetch, global: false);
        var consumer = new PriorityConsumer(channel, loop.Context, PriorityConsumer.LevelFromPriority(2, Rabbit.MaxPriority), async d =>
        {
            Rabbit.Spin(work);
            await Console.Out.WriteLineAsync($"handled {Encoding.UTF8.GetString(d.Body)} {d.Redelivered}");
        });
        await channel.BasicConsumeAsync(queue, autoAck: false, consumer);
        // end-snippet

        // Done when the queue has nothing ready and this worker nothing in flight, a second long; a broker that is away (restarting)
        // is waited for.
        DateTime idleSince = DateTime.MaxValue;
        while (true)
        {
            await Task.Delay(100);
            bool idle;
            try
            {
                await using IChannel probe = await connection.CreateChannelAsync();
                idle = (await probe.QueueDeclarePassiveAsync(queue)).MessageCount == 0 && consumer.InFlight == 0;
            }
            catch (Exception e) when (e is RabbitMQ.Client.Exceptions.RabbitMQClientException or System.IO.IOException or OperationCanceledException)
            {
                idle = false;
            }

            if (!idle)
            {
                idleSince = DateTime.MaxValue;
            }
            else if (idleSince == DateTime.MaxValue)
            {
                idleSince = DateTime.UtcNow;
            }
            else if (DateTime.UtcNow - idleSince > TimeSpan.FromSeconds(1))
            {
                await Console.Out.WriteLineAsync($"drained: {consumer.Completed} completed, {consumer.Failed} failed");
                return 0;
            }
        }
    }
}
