using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Threading.Tasks;
using MessageBus.RabbitMq;
using MessageBus.RabbitMq.Internal;
using RabbitMQ.Client;
using RabbitMQ.Client.Exceptions;

namespace BrokerWorker.Bus;

/// <summary>The RabbitMQ queue and its record as a <see cref="Broker"/> (<c>--bus rabbitmq</c>).</summary>
public sealed class RabbitMqBroker : Broker
{
    public static readonly BrokerKind Kind = new(
        "rabbitmq", "RabbitMQ", "PRIORITYASYNC_RABBITMQ", RabbitMqLeaseQueue.ValidateConnectionString, e => e is RabbitMQClientException, Create);

    private readonly RabbitMqLeaseQueue _queue;
    private readonly ConnectionFactory _factory;

    private RabbitMqBroker(RabbitMqLeaseQueue queue, ConnectionFactory factory)
        : base(queue, $"RabbitMQ at {queue.Endpoint}")
    {
        _queue = queue;
        _factory = factory;
    }

    public override long Reconnects => _queue.Reconnects;

    public override string PlainLoop => "plain RabbitMQ.Client loop (basic.get, the same record events, one connection)";

    public override async Task SetUpAsync(bool purge)
    {
        await (purge ? _queue.PurgeAsync() : _queue.ConnectAsync());
        await _queue.GetCountsAsync(); // the record read up to now, before the clock starts
    }

    public override Task EnqueueAsync(IReadOnlyList<string> payloads) => _queue.EnqueueAsync(payloads);

    /// <summary>What the queue sends per message, on one connection with nothing around it: <c>basic.get</c>, the delivery and
    /// the completion to the record (each confirmed, in that order), the acknowledgement. The queue's own cost on top: its
    /// reconnection wrapper, lease objects, reading the record back for the completion's verdict.</summary>
    public override async Task<(long Cycles, TimeSpan Elapsed)> PlainCyclesAsync(TimeSpan lease, TimeSpan duration)
    {
        await using IConnection connection = await RabbitMqConnection.ConnectAsync(_factory, "broker-worker-plain");
        await using IChannel messages = await connection.CreateChannelAsync();
        await using IChannel record = await connection.CreateChannelAsync(new CreateChannelOptions(true, true));
        var properties = new BasicProperties { Persistent = true };
        long cycles = 0;
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            BasicGetResult got = await messages.BasicGetAsync(_queue.QueueName, autoAck: false)
                ?? throw new InvalidOperationException("The queue ran dry during the measurement.");
            long id = long.Parse(got.BasicProperties.MessageId!, CultureInfo.InvariantCulture);
            await record.BasicPublishAsync("", _queue.RecordName, true, properties, QueueRecord.Format(QueueRecord.Delivered, "plain", (cycles * 2) + 1, id, cycles, false));
            await record.BasicPublishAsync("", _queue.RecordName, true, properties, QueueRecord.Format(QueueRecord.Completed, "plain", (cycles * 2) + 2, id, cycles, false));
            await messages.BasicAckAsync(got.DeliveryTag, multiple: false);
            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }

    public override async Task<string> DurabilityAsync()
    {
        await using IConnection connection = await RabbitMqConnection.ConnectAsync(_factory, "broker-worker-report");
        string version = connection.ServerProperties?.TryGetValue("version", out object? v) == true && v is byte[] bytes ? Encoding.UTF8.GetString(bytes) : "?";
        return $"Server: RabbitMQ {version}; a durable queue of persistent messages and a stream for the record, every publish confirmed.";
    }

    public override Task DropAsync() => _queue.DropAsync();

    public override ValueTask DisposeAsync() => _queue.DisposeAsync();

    /// <summary>A queue object whose connection is named after <paramref name="role"/> and the process (<c>rabbitmqctl list_connections</c>).</summary>
    private static Broker Create(string connectionString, Options options, string queueName, string role) =>
        new RabbitMqBroker(
            new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions
            {
                ConnectionString = connectionString,
                QueueName = queueName,
                Owner = $"{role}:{Environment.ProcessId}",
            }),
            RabbitMqConnection.CreateFactory(connectionString));
}
