using TestSupport;

namespace MessageBus.Postgres.Tests;

/// <summary><see cref="LeaseQueueBus"/> over the PostgreSQL queue: the contract every broker's queue keeps behind the bus.</summary>
public sealed class PostgresLeaseQueueBusTests : LeaseQueueBusContract
{
    private PostgresLeaseQueue? _queue;

    public override async Task DisposeAsync()
    {
        if (_queue is not null)
        {
            await _queue.DropAsync();
            await _queue.DisposeAsync();
        }
    }

    protected override async Task<ILeaseQueue> NewQueueAsync(params string[] payloads)
    {
        _queue = await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions());
        await _queue.EnqueueAsync(payloads);
        return _queue;
    }

    // A 50 ms lease, left to expire by the server's clock.
    protected override async Task<Lease> ReceiveAndLoseAsync(IMessageBus bus) => (await bus.ReceiveAsync(TimeSpan.FromMilliseconds(50)))!;
}
