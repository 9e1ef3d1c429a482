using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using RabbitMQ.Client;

namespace RabbitMqConsumers;

/// <summary>The broker's side of the experiment: queues with <c>x-max-priority</c>, confirmed publishing, counts (connecting:
/// <see cref="MessageBus.RabbitMq.RabbitMqConnection"/>).</summary>
public static class Rabbit
{
    /// <summary>The queues' <c>x-max-priority</c>: urgent messages are published at 9, the rest at 0.</summary>
    public const byte MaxPriority = 9;

    /// <summary>Declares a fresh, empty priority queue, as MassTransit's receive endpoint declares it (so that it accepts it as is).</summary>
    public static async Task DeclareAsync(IChannel channel, string queue)
    {
        await channel.QueueDeleteAsync(queue);
        await channel.QueueDeclareAsync(queue, durable: true, exclusive: false, autoDelete: false,
            arguments: new Dictionary<string, object?> { ["x-max-priority"] = (int)MaxPriority });
    }

    /// <summary>
    /// Publishes <paramref name="count"/> <see cref="Job"/> messages at priority 9 (<paramref name="urgent"/>) or 0 and waits for
    /// the broker's confirms. The body is MassTransit's JSON envelope, which the RabbitMQ.Client consumers ignore: every consumer
    /// gets the very same messages.
    /// </summary>
    public static async Task PublishAsync(IChannel confirms, string queue, int count, bool urgent)
    {
        byte[] body = Encoding.UTF8.GetBytes(
            """{"messageType":["urn:message:RabbitMqConsumers:Job"],"message":{"urgent":""" + (urgent ? "true" : "false") + "}}");
        var properties = new BasicProperties { Priority = urgent ? MaxPriority : (byte)0, ContentType = "application/vnd.masstransit+json" };
        var tasks = new List<Task>(count);
        for (int i = 0; i < count; i++)
        {
            tasks.Add(confirms.BasicPublishAsync("", queue, mandatory: false, properties, body).AsTask());
        }

        await Task.WhenAll(tasks);
    }

    /// <summary>
    /// Waits until the consumer has taken its prefetch: <paramref name="queue"/> holds <paramref name="ready"/> messages ready or
    /// fewer. While any are left, the prefetch is full (the broker refills it at each ack).
    /// </summary>
    public static async Task WaitForPrefetchAsync(IChannel channel, string queue, uint ready, TimeSpan patience)
    {
        long start = Stopwatch.GetTimestamp();
        uint left;
        while ((left = (await channel.QueueDeclarePassiveAsync(queue)).MessageCount) > ready)
        {
            if (Stopwatch.GetElapsedTime(start) > patience)
            {
                throw new TimeoutException($"The queue {queue} did not come down to {ready} ready messages within {patience.TotalSeconds} s.");
            }

            await Task.Delay(2);
        }

        if (left == 0)
        {
            throw new InvalidOperationException($"The consumer drained {queue} before the urgent message was sent: its prefetch was not full. Give it more --work.");
        }
    }

    /// <summary>CPU-bound work: spins for <paramref name="duration"/> (it never yields the thread).</summary>
    public static void Spin(TimeSpan duration)
    {
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            Thread.SpinWait(20);
        }
    }

    /// <summary>A duration for people: 10 ms, 250 us.</summary>
    public static string Format(TimeSpan value) => value.TotalMilliseconds >= 1 ? $"{value.TotalMilliseconds:0.#} ms" : $"{value.TotalMicroseconds:0} us";

    /// <summary>A consumer kind for people, as the table shows it.</summary>
    public static string Describe(string kind) => kind switch
    {
        "client" => "RabbitMQ.Client, plain consumer",
        "client-loop" => "RabbitMQ.Client + PriorityContext (one thread)",
        "client-pool" => "RabbitMQ.Client + PriorityThreadPool (2 threads, level 0 capped at 1)",
        "masstransit" => "MassTransit, plain (defaults)",
        "masstransit-loop" => "MassTransit + UsePriorityScheduler (PriorityContext)",
        _ => kind,
    };
}
