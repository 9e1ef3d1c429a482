using System;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync;
using RabbitMQ.Client;

namespace RabbitMqConsumers;

/// <summary>One delivery, copied out of the client's buffer (the body is only valid during the client's callback).</summary>
/// <param name="DeliveryTag">The channel's tag for the ack.</param>
/// <param name="Redelivered">Whether the broker delivered it before (a channel closed with it unacknowledged).</param>
/// <param name="Properties">The message's properties: <c>Priority</c>, <c>Headers</c>, <c>MessageId</c>...</param>
/// <param name="Body">The message's body.</param>
public sealed record Delivery(ulong DeliveryTag, bool Redelivered, IReadOnlyBasicProperties Properties, byte[] Body);

/// <summary>
/// A RabbitMQ.Client consumer whose deliveries run on a priority scheduler, each at the level <c>levelOf</c> gives it (from the
/// message's <c>priority</c> property or a header), and are acknowledged when their handler has finished. All the deliveries of the
/// prefetch are handed to the scheduler as they arrive, so one of a higher level starts as soon as the running handler awaits or
/// ends, ahead of the queued ones; a plain consumer runs them in arrival order.
/// </summary>
/// <remarks>A handler that throws has its message rejected without requeue (dead-lettered if the queue has a dead-letter exchange).
/// An ack that finds its channel closed (the connection dropped) is not an error: the broker redelivers that message.</remarks>
public sealed class PriorityConsumer(IChannel channel, PriorityScheduler scheduler, Func<Delivery, int> levelOf, Func<Delivery, Task> handler)
    : AsyncDefaultBasicConsumer(channel)
{
    private long _inFlight;
    private long _completed;
    private long _failed;

    /// <summary>Deliveries handed to the scheduler and not yet acknowledged or rejected.</summary>
    public long InFlight => Interlocked.Read(ref _inFlight);

    /// <summary>Messages handled and acknowledged.</summary>
    public long Completed => Interlocked.Read(ref _completed);

    /// <summary>Messages whose handler threw (rejected).</summary>
    public long Failed => Interlocked.Read(ref _failed);

    /// <summary>The level of a message from its <c>priority</c> property (0 to <paramref name="maxPriority"/>), spread over <paramref name="levels"/> levels.</summary>
    public static Func<Delivery, int> LevelFromPriority(int levels, int maxPriority) => d => LevelOf(d.Properties.Priority, levels, maxPriority);

    /// <summary>The level of <paramref name="priority"/> (0 to <paramref name="maxPriority"/>, as the queue's <c>x-max-priority</c> caps it) among <paramref name="levels"/> levels.</summary>
    public static int LevelOf(byte priority, int levels, int maxPriority) => Math.Min((int)priority, maxPriority) * levels / (maxPriority + 1);

    public override Task HandleBasicDeliverAsync(string consumerTag, ulong deliveryTag, bool redelivered, string exchange, string routingKey,
        IReadOnlyBasicProperties properties, ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default)
    {
        var delivery = new Delivery(deliveryTag, redelivered, properties, body.ToArray());

        // Not awaited: the client's dispatcher goes on to the next delivery at once, so every delivery of the prefetch reaches the
        // scheduler and its level decides when it runs. The task ends by itself (ack or reject) and never throws.
        _ = HandleAsync(delivery, levelOf(delivery));
        return Task.CompletedTask;
    }

    private async Task HandleAsync(Delivery delivery, int level)
    {
        Interlocked.Increment(ref _inFlight);
        try
        {
            await scheduler.InvokeAsync(async () =>
            {
                bool handled;
                try
                {
                    await handler(delivery);
                    handled = true;
                }
                catch (Exception)
                {
                    handled = false;
                }

                if (handled)
                {
                    await Channel.BasicAckAsync(delivery.DeliveryTag, multiple: false);
                    Interlocked.Increment(ref _completed);
                }
                else
                {
                    await Channel.BasicRejectAsync(delivery.DeliveryTag, requeue: false);
                    Interlocked.Increment(ref _failed);
                }
            }, level);
        }
        catch (Exception e) when (e is RabbitMQ.Client.Exceptions.RabbitMQClientException or System.IO.IOException or ObjectDisposedException or OperationCanceledException)
        {
            // The channel closed (the broker redelivers this message to a consumer that is still there), or the scheduler ended.
        }
        finally
        {
            Interlocked.Decrement(ref _inFlight);
        }
    }
}
