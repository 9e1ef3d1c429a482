namespace MessageBus.Redis.Tests;

/// <summary>The usage example of samples/MessageBus.Redis/README.md ("The queue"), compiled and run here against a real Redis;
/// tools/Snippets copies the region there, and tests/Docs.Tests checks the copy.</summary>
public sealed class ReadmeExampleTests
{
    [RedisFact]
    public async Task QueueExample_EnqueueReceiveRenewComplete_CompletesEveryMessageOnce()
    {
        RedisLeaseQueueOptions test = TestServer.NewOptions();
        string connectionString = test.ConnectionString!;
        string queueName = test.QueueName; // keys of the test's own

        // begin-snippet: redis-queue
        // Needs: samples/MessageBus.Redis referenced; connectionString and queueName of yours, in an async method.
        await using var queue = new RedisLeaseQueue(new RedisLeaseQueueOptions { ConnectionString = connectionString, QueueName = queueName, Owner = "worker-1" });
        await queue.ConnectAsync();                                         // checks the server and the password
        await queue.EnqueueAsync([.. Enumerable.Range(0, 100).Select(i => $"message {i}")]);

        int duplicates = 0;
        while (await queue.ReceiveAsync(TimeSpan.FromSeconds(5)) is { } lease)
        {
            // ... work, renewing before the lease runs out:
            if (!await queue.RenewAsync(lease, TimeSpan.FromSeconds(5)))
            {
                continue;                                                   // the lease is lost: another delivery will do the message
            }

            if (!await queue.CompleteAsync(lease))
            {
                duplicates++;                                               // too late: the lock expired, the message is redelivered
            }
        }

        BusCounts counts = await queue.GetCountsAsync();                    // the server's counts, not what the worker believes
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
