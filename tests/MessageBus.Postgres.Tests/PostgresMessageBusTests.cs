namespace MessageBus.Postgres.Tests;

/// <summary>The adapter behind <see cref="IMessageBus"/> against a real PostgreSQL: the same contract as the in-memory bus.</summary>
public sealed class PostgresMessageBusTests : IAsyncLifetime
{
    private static readonly TimeSpan s_long = TimeSpan.FromMinutes(10);
    private PostgresLeaseQueue? _queue;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_queue is not null)
        {
            await _queue.DropAsync();
            await _queue.DisposeAsync();
        }
    }

    [PostgresFact]
    public async Task Operations_ThroughTheInterface_AreFencedAndCountedByTheDatabase()
    {
        IMessageBus bus = await NewBusAsync("a", "b");

        Lease first = (await bus.ReceiveAsync(s_long))!;
        Lease second = (await bus.ReceiveAsync(s_long))!;
        first.Payload.Should().Be("a");
        first.DeliveryCount.Should().Be(1);
        second.Token.Should().BeGreaterThan(first.Token);

        (await bus.RenewAsync(first, s_long)).Should().BeTrue();
        (await bus.CompleteAsync(first)).Should().BeTrue();
        (await bus.AbandonAsync(second)).Should().BeTrue();

        // The abandoned message comes back at once with a new token; the old token is fenced off.
        Lease again = (await bus.ReceiveAsync(s_long))!;
        again.MessageId.Should().Be(second.MessageId);
        again.DeliveryCount.Should().Be(2);
        again.Token.Should().NotBe(second.Token);
        (await bus.RenewAsync(second, s_long)).Should().BeFalse();
        (await bus.CompleteAsync(second)).Should().BeFalse();
        (await bus.CompleteAsync(again)).Should().BeTrue();
        (await bus.ReceiveAsync(s_long)).Should().BeNull();

        (await bus.GetCountsAsync()).Should().Be(new BusCounts(
            Enqueued: 2, Delivered: 3, Redelivered: 1, Completed: 2, RejectedCompletes: 1, FailedRenewals: 1, Abandoned: 1, Leased: 0, Available: 0, ExpiredRedeliveries: 0));
    }

    [PostgresFact]
    public async Task ReceiveAsync_LeaseExpiredByTheDatabaseClock_RedeliversAndFencesTheOldHolder()
    {
        IMessageBus bus = await NewBusAsync("m");

        Lease stale = (await bus.ReceiveAsync(TimeSpan.FromMilliseconds(50)))!;
        Lease? fresh = null;
        using var timeout = new CancellationTokenSource(TestDatabase.Patience);
        while (fresh is null)
        {
            timeout.Token.ThrowIfCancellationRequested();
            fresh = await bus.ReceiveAsync(s_long);
            if (fresh is null)
            {
                await Task.Delay(20);
            }
        }

        fresh.MessageId.Should().Be(stale.MessageId);
        fresh.DeliveryCount.Should().Be(2);
        (await bus.CompleteAsync(stale)).Should().BeFalse();
        (await bus.CompleteAsync(fresh)).Should().BeTrue();
        BusCounts counts = await bus.GetCountsAsync();
        counts.Completed.Should().Be(1);
        counts.RejectedCompletes.Should().Be(1);
        counts.Redelivered.Should().Be(1);
    }

    [Fact]
    public void Constructor_NullQueue_Throws()
    {
        Action act = () => _ = new PostgresMessageBus(null!);

        act.Should().Throw<ArgumentNullException>().WithParameterName("queue");
    }

    private async Task<IMessageBus> NewBusAsync(params string[] payloads)
    {
        _queue = await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions());
        await _queue.EnqueueAsync(payloads);
        return new PostgresMessageBus(_queue);
    }
}
