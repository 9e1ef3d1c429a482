using MessageBus;

namespace TestSupport;

/// <summary>
/// <see cref="LeaseQueueBus"/> over a real broker's queue, written once and run against each (PostgreSQL, Redis, RabbitMQ): what a worker
/// sees through <see cref="IMessageBus"/> is the broker's fencing and the broker's counts, and renewals that the bus puts together
/// into one request are each judged on their own. <c>[ServerFact]</c> is each project's own (skipped without a server, failing on CI).
/// </summary>
public abstract class LeaseQueueBusContract : IAsyncLifetime
{
    protected static readonly TimeSpan LongLease = TimeSpan.FromMinutes(10);

    /// <summary>Every wait on the server is bounded by this, and fails loudly when it runs out.</summary>
    protected static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    public Task InitializeAsync() => Task.CompletedTask;

    public abstract Task DisposeAsync();

    /// <summary>A new queue of the test's own with <paramref name="payloads"/> on it, in order.</summary>
    protected abstract Task<ILeaseQueue> NewQueueAsync(params string[] payloads);

    [ServerFact]
    public async Task Operations_ThroughTheBus_AreFencedAndCountedByTheBroker()
    {
        IMessageBus bus = new LeaseQueueBus(await NewQueueAsync("a", "b"));

        Lease first = (await bus.ReceiveAsync(LongLease))!;
        Lease second = (await bus.ReceiveAsync(LongLease))!;
        first.Payload.Should().Be("a");
        first.DeliveryCount.Should().Be(1);
        second.Token.Should().NotBe(first.Token);

        (await bus.RenewAsync(first, LongLease)).Should().BeTrue();
        (await bus.CompleteAsync(first)).Should().BeTrue();
        (await bus.AbandonAsync(second)).Should().BeTrue();

        // The abandoned message comes back at once with a new token; the old token is fenced off.
        Lease again = (await bus.ReceiveAsync(LongLease))!;
        again.MessageId.Should().Be(second.MessageId);
        again.DeliveryCount.Should().Be(2);
        again.Token.Should().NotBe(second.Token);
        (await bus.RenewAsync(second, LongLease)).Should().BeFalse();
        (await bus.CompleteAsync(second)).Should().BeFalse();
        (await bus.CompleteAsync(again)).Should().BeTrue();
        (await bus.ReceiveAsync(LongLease)).Should().BeNull();

        (await bus.GetCountsAsync()).Should().Be(new BusCounts(
            Enqueued: 2, Delivered: 3, Redelivered: 1, Completed: 2, RejectedCompletes: 1, FailedRenewals: 1, Abandoned: 1, Leased: 0, Available: 0, ExpiredRedeliveries: 0));
    }

    /// <summary>
    /// Takes the one message of the queue and makes the broker take the delivery away by its own rule: PostgreSQL and Redis let a
    /// short lease expire by their clock, RabbitMQ loses the connection that held it (its queue's own lease is tested beside it).
    /// </summary>
    protected abstract Task<Lease> ReceiveAndLoseAsync(IMessageBus bus);

    [ServerFact]
    public async Task ReceiveAsync_DeliveryLostByTheBrokersRule_RedeliversAndFencesTheOldHolder()
    {
        IMessageBus bus = new LeaseQueueBus(await NewQueueAsync("m"));

        Lease stale = await ReceiveAndLoseAsync(bus);
        Lease? fresh = null;
        using var timeout = new CancellationTokenSource(Patience);
        while (fresh is null)
        {
            // Redis hands an expired lease out again after its stalled check (every second by default); PostgreSQL at once;
            // RabbitMQ once it has seen the connection go.
            timeout.Token.ThrowIfCancellationRequested();
            fresh = await bus.ReceiveAsync(LongLease);
            if (fresh is null)
            {
                await Task.Delay(20);
            }
        }

        fresh.MessageId.Should().Be(stale.MessageId);
        fresh.DeliveryCount.Should().Be(2);
        (await bus.RenewAsync(stale, LongLease)).Should().BeFalse();
        (await bus.CompleteAsync(stale)).Should().BeFalse();
        (await bus.CompleteAsync(fresh)).Should().BeTrue();
        BusCounts counts = await bus.GetCountsAsync();
        (counts.Completed, counts.RejectedCompletes, counts.FailedRenewals, counts.Redelivered, counts.ExpiredRedeliveries).Should().Be((1, 1, 1, 1, 1));
    }

    [ServerFact]
    public async Task RenewAsync_ManyMessagesInFlightAtOnce_EachJudgedOnItsOwn_TheStaleOneRefusedAndCounted()
    {
        // The renewals are asked for together, as a worker's slots do: the bus sends the first at once and the others, asked for
        // while it is on its way, in one request after it. However they are grouped, each lease is renewed or refused on its own.
        IMessageBus bus = new LeaseQueueBus(await NewQueueAsync("a", "b", "c", "d", "e", "f"));
        var leases = new List<Lease>();
        for (int i = 0; i < 6; i++)
        {
            leases.Add((await bus.ReceiveAsync(LongLease))!);
        }

        (await bus.CompleteAsync(leases[2])).Should().BeTrue();

        bool[] renewed = await Task.WhenAll(leases.Select(l => bus.RenewAsync(l, LongLease).AsTask())).WaitAsync(Patience);

        renewed.Should().Equal(true, true, false, true, true, true);
        (await bus.RenewAllAsync(leases, LongLease)).Should().Equal(true, true, false, true, true, true);
        (await bus.GetCountsAsync()).FailedRenewals.Should().Be(2, "the completed message's two renewals, and no other");
        foreach (Lease lease in leases.Where(l => l != leases[2]))
        {
            (await bus.CompleteAsync(lease)).Should().BeTrue("a refusal in the same request left the other leases alone");
        }
    }
}
