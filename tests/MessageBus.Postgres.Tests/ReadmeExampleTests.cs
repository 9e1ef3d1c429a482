namespace MessageBus.Postgres.Tests;

/// <summary>The usage example of samples/MessageBus.Postgres/README.md ("The queue"), compiled and run here against a real PostgreSQL;
/// tools/Snippets copies the region there, and tests/Docs.Tests checks the copy.</summary>
public sealed class ReadmeExampleTests
{
    [PostgresFact]
    public async Task QueueExample_EnqueueReceiveRenewComplete_CompletesEveryMessageOnce()
    {
        PostgresLeaseQueueOptions test = TestDatabase.NewOptions();
        string connectionString = test.ConnectionString!;
        string queueName = test.QueueName; // a table of the test's own

        // begin-snippet: postgres-queue
        // Needs: samples/MessageBus.Postgres referenced; connectionString and queueName of yours, in an async method.
        await using var queue = new PostgresLeaseQueue(new PostgresLeaseQueueOptions { ConnectionString = connectionString, QueueName = queueName, Owner = "worker-1" });
        await queue.EnsureSchemaAsync();                                    // idempotent; several processes may call it at once
        await queue.EnqueueAsync([.. Enumerable.Range(0, 100).Select(i => $"message {i}")]);   // one statement

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
                duplicates++;                                               // too late: another delivery owns the message
            }
        }

        BusCounts counts = await queue.GetCountsAsync();                    // the database's counts, not what the worker believes
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
