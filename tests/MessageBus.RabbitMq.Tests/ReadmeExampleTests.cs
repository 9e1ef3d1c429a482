using TestSupport.RabbitMq;

namespace MessageBus.RabbitMq.Tests;

/// <summary>The usage example of samples/MessageBus.RabbitMq/README.md ("The queue"), compiled and run here against a real RabbitMQ;
/// tools/Snippets copies the region there, and tests/Docs.Tests checks the copy.</summary>
public sealed class ReadmeExampleTests
{
    [RabbitMqFact]
    public async Task QueueExample_EnqueueReceiveRenewComplete_CompletesEveryMessageOnce()
    {
        string connectionString = TestBroker.Uri.ToString();
        string queueName = TestBroker.NewQueueName("readme"); // a queue of the test's own

        // begin-snippet: rabbitmq-queue
        // Needs: samples/MessageBus.RabbitMq referenced; connectionString (amqp://...) and queueName of yours, in an async method.
        await using var queue = new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions { ConnectionString = connectionString, QueueName = queueName, Owner = "worker-1" });
        await queue.ConnectAsync();                                         // checks the server and the password
        await queue.EnqueueAsync([.. Enumerable.Range(0, 100).Select(i => $"message {i}")]);

        int duplicates = 0;
        while (await queue.ReceiveAsync(TimeSpan.FromSeconds(5)) is { } lease)
        {
            // ... work, asking now and then whether the delivery is still held:
            if (!await queue.RenewAsync(lease, TimeSpan.FromSeconds(5)))
            {
                continue;                                                   // the connection was lost: the broker redelivers it
            }

            if (!await queue.CompleteAsync(lease))
            {
                duplicates++;                                               // another delivery's completion was recorded first
            }
        }

        BusCounts counts = await queue.GetCountsAsync();                    // the record's counts, the same in every process
        // end-snippet

        try
        {
            duplicates.Should().Be(0);
            counts.Should().Be(new BusCounts(Enqueued: 100, Delivered: 100, Redelivered: 0, Completed: 100, RejectedCompletes: 0,
                FailedRenewals: 0, Abandoned: 0, Leased: 0, Available: 0, ExpiredRedeliveries: 0));
        }
        finally
        {
            await queue.DropAsync();
        }
    }
}
