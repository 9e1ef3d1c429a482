using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using MessageBus;
using MessageBus.RabbitMq;
using RabbitMqConsumers;
using RabbitMQ.Client;
using Samples.Support;

if (!Settings.TryParse(args, out Settings? settings, out string? error))
{
    Console.Error.WriteLine($"RabbitMqConsumers: {error} (see --help)");
    return SampleCommandLine.BadInput;
}

if (settings.Show is not null)
{
    Console.WriteLine(settings.Show);
    return 0;
}

ConnectionFactory factory;
try
{
    factory = RabbitMqConnection.CreateFactory(settings.Connection);
}
catch (ArgumentException e)
{
    Console.Error.WriteLine($"RabbitMqConsumers: {e.Message.Split(" (Parameter", 2)[0]}");
    return SampleCommandLine.BadInput;
}

try
{
    if (settings.Drain is { } queue)
    {
        return await Worker.DrainAsync(factory, queue, (ushort)settings.Prefetch[0], settings.Work);
    }

    await using IConnection admin = await RabbitMqConnection.ConnectAsync(factory, "RabbitMqConsumers admin");
    await using IChannel channel = await admin.CreateChannelAsync(new CreateChannelOptions(publisherConfirmationsEnabled: true, publisherConfirmationTrackingEnabled: true));
    return settings.Throughput ? await ThroughputAsync(channel) : await LatencyAsync(channel);
}
catch (QueueConnectionException e)
{
    Console.Error.WriteLine($"RabbitMqConsumers: {e.Message}.");
    return SampleCommandLine.BadInput;
}

// The urgent message's start latency: from its publish to its handler's start, with the consumer's prefetch full of CPU-bound
// messages and more of them waiting in the broker's priority queue (which puts the urgent one ahead of those).
async Task<int> LatencyAsync(IChannel channel)
{
    const int Waiting = 100; // low messages left in the broker's queue, which the urgent one overtakes there
    Console.WriteLine($"Urgent message's start latency, ms (median / max of {settings.Trials}), prefetch full of {Rabbit.Format(settings.Work)} CPU-bound messages:");
    Console.WriteLine();
    Console.WriteLine($"| consumer | {string.Join(" | ", settings.Prefetch.Select(p => $"P = {p}"))} |");
    Console.WriteLine($"|---|{string.Concat(settings.Prefetch.Select(_ => "---|"))}");
    foreach (string kind in settings.Consumers)
    {
        var cells = new List<string>();
        foreach (int prefetch in settings.Prefetch)
        {
            var trials = new List<double>();
            for (int trial = 0; trial < settings.Trials; trial++)
            {
                string queue = $"rabbitmq-consumers-{kind}-{prefetch}";
                await using (ConsumerUnderTest consumer = ConsumerUnderTest.Create(kind, factory, settings.Work))
                {
                    await Rabbit.DeclareAsync(channel, queue);
                    await Rabbit.PublishAsync(channel, queue, prefetch + Waiting, urgent: false);
                    await consumer.StartAsync(queue, (ushort)prefetch);
                    await Rabbit.WaitForPrefetchAsync(channel, queue, Waiting, TimeSpan.FromMinutes(2));
                    long published = Stopwatch.GetTimestamp();
                    await Rabbit.PublishAsync(channel, queue, 1, urgent: true);
                    long started = await consumer.UrgentStarted.WaitAsync(TimeSpan.FromMinutes(5));
                    trials.Add(Stopwatch.GetElapsedTime(published, started).TotalMilliseconds);
                }

                await channel.QueueDeleteAsync(queue);
            }

            trials.Sort();
            cells.Add($"{trials[trials.Count / 2]:0.0} / {trials[^1]:0.0}");
        }

        Console.WriteLine($"| {Rabbit.Describe(kind)} | {string.Join(" | ", cells)} |");
    }

    return 0;
}

// Messages per second through the plain consumer and the priority loop, the same work per message, best of three rounds each.
async Task<int> ThroughputAsync(IChannel channel)
{
    const ushort Prefetch = 50;
    Console.WriteLine($"{settings.Messages} messages of {Rabbit.Format(settings.Work)} CPU work, prefetch {Prefetch}, best of 3 rounds (messages per second):");
    Console.WriteLine();
    Console.WriteLine("| consumer | messages/s | plain / this (above 1: slower than plain) |");
    Console.WriteLine("|---|---|---|");
    string[] kinds = ["client", "client-loop", "client-pool"];
    var best = new Dictionary<string, double>();
    for (int round = 0; round < 3; round++)
    {
        foreach (string kind in kinds)
        {
            string queue = $"rabbitmq-consumers-throughput-{kind}";
            await using (ConsumerUnderTest consumer = ConsumerUnderTest.Create(kind, factory, settings.Work))
            {
                await Rabbit.DeclareAsync(channel, queue);
                await Rabbit.PublishAsync(channel, queue, settings.Messages, urgent: false);
                long start = Stopwatch.GetTimestamp();
                await consumer.StartAsync(queue, Prefetch);
                while (consumer.Handled < settings.Messages)
                {
                    await Task.Delay(1);
                }

                double rate = settings.Messages / Stopwatch.GetElapsedTime(start).TotalSeconds;
                best[kind] = Math.Max(best.GetValueOrDefault(kind), rate);
            }

            await channel.QueueDeleteAsync(queue);
        }
    }

    foreach (string kind in kinds)
    {
        Console.WriteLine($"| {Rabbit.Describe(kind)} | {best[kind]:0} | {best["client"] / best[kind]:0.00}x |");
    }

    return 0;
}
