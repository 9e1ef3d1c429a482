using System;
using System.Threading;

namespace MessageBus.Redis;

/// <summary>
/// A message received with a lease. The <see cref="Token"/> fences it: the server accepts a renewal, completion or abandonment
/// only while the message's lock key holds this token, so a worker whose lease expired cannot act on it any more.
/// </summary>
/// <remarks>Thread safety: every member may be read from any thread; <see cref="LeaseUntil"/> changes when a renewal succeeds.</remarks>
public sealed class RedisLease
{
    private long _leaseUntilUtcTicks;

    internal RedisLease(long messageId, string payload, long token, int deliveryCount, DateTimeOffset leaseUntil)
    {
        MessageId = messageId;
        Payload = payload;
        Token = token;
        DeliveryCount = deliveryCount;
        _leaseUntilUtcTicks = leaseUntil.UtcTicks;
    }

    /// <summary>The message's id (from the queue's counter).</summary>
    public long MessageId { get; }

    /// <summary>The message's payload.</summary>
    public string Payload { get; }

    /// <summary>The fencing token of this delivery: unique and increasing across the queue; a redelivery gets a new one.</summary>
    public long Token { get; }

    /// <summary>Which delivery of the message this is: 1 for the first; more after an expired lease or an abandonment.</summary>
    public int DeliveryCount { get; }

    /// <summary>When the lease ends by the server's clock, as of the receive or the latest successful renewal.</summary>
    public DateTimeOffset LeaseUntil
    {
        get => new(Volatile.Read(ref _leaseUntilUtcTicks), TimeSpan.Zero);
        internal set => Volatile.Write(ref _leaseUntilUtcTicks, value.UtcTicks);
    }

    /// <inheritdoc/>
    public override string ToString() => $"message {MessageId} (token {Token}, delivery {DeliveryCount})";
}
