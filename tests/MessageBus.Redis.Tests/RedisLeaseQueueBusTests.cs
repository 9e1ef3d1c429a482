using TestSupport;

namespace MessageBus.Redis.Tests;

/// <summary><see cref="LeaseQueueBus"/> over the Redis queue: the contract every broker's queue keeps behind the bus.</summary>
public sealed class RedisLeaseQueueBusTests : LeaseQueueBusContract
{
    private RedisLeaseQueue? _queue;

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
        // The periodic stalled check puts a lapsed lease back in line, as the BrokerWorker's queues run it.
        _queue = await TestServer.CreateQueueAsync(TestServer.NewOptions(stalledCheckInterval: TimeSpan.FromMilliseconds(100)));
        await _queue.EnqueueAsync(payloads);
        return _queue;
    }

    // A 50 ms lease, left to expire by the server's clock.
    protected override async Task<Lease> ReceiveAndLoseAsync(IMessageBus bus) => (await bus.ReceiveAsync(TimeSpan.FromMilliseconds(50)))!;
}
