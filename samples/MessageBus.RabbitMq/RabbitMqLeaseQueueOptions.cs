using MessageBus;

namespace MessageBus.RabbitMq;

/// <summary>Settings of a <see cref="RabbitMqLeaseQueue"/>: <see cref="LeaseQueueOptions.ConnectionString"/> is an AMQP URI
/// (<c>amqp://user:password@host:port/vhost</c>), <see cref="LeaseQueueOptions.QueueName"/> the durable queue (letters, digits,
/// <c>_</c>, <c>-</c> and <c>.</c>, at most 200; its record is the stream <c>{QueueName}.record</c>), and
/// <see cref="LeaseQueueOptions.Owner"/> names the connection. The connect timeout bounds the TCP connection and the AMQP handshake.</summary>
public sealed class RabbitMqLeaseQueueOptions : LeaseQueueOptions
{
}
