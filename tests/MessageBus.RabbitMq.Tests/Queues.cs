using TestSupport.RabbitMq;

namespace MessageBus.RabbitMq.Tests;

/// <summary>Fresh, uniquely named queues on the tests' node.</summary>
internal static class Queues
{
    public static RabbitMqLeaseQueueOptions NewOptions(string? queueName = null, string owner = "test", Uri? node = null) => new()
    {
        ConnectionString = (node ?? TestBroker.Uri).ToString(),
        QueueName = queueName ?? TestBroker.NewQueueName("q"),
        Owner = owner,
    };

    public static async Task<RabbitMqLeaseQueue> CreateAsync(RabbitMqLeaseQueueOptions? options = null)
    {
        RabbitMqLeaseQueue queue = new(options ?? NewOptions());
        await queue.ConnectAsync();
        return queue;
    }
}
