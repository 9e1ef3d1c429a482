using TestSupport;
using TestSupport.RabbitMq;

namespace MessageBus.RabbitMq.Tests;

/// <summary><see cref="LeaseQueueBus"/> over the RabbitMQ queue: the contract every broker's queue keeps behind the bus.</summary>
public sealed class RabbitMqLeaseQueueBusTests : LeaseQueueBusContract
{
    private RabbitMqLeaseQueue? _queue;

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
        _queue = await Queues.CreateAsync();
        await _queue.EnqueueAsync(payloads);
        return _queue;
    }

    // RabbitMQ's own rule (the queue's lease lapsing is RabbitMqLeaseQueueTests'): a delivery is lost with the connection that
    // held it, and the broker redelivers it.
    protected override async Task<Lease> ReceiveAndLoseAsync(IMessageBus bus)
    {
        Lease lease = (await bus.ReceiveAsync(LongLease))!;
        await _queue!.AbortConnectionAsync();
        return lease;
    }
}
