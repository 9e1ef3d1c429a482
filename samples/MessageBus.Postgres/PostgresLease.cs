using System;
using System.Threading;

namespace MessageBus.Postgres;

/// <summary>
/// A message received with a lease. The <see cref="Token"/> fences it: the database accepts a renewal, completion or abandonment
/// only with the token of the message's latest delivery, so a worker whose lease lapsed and was handed to another cannot act on it.
/// </summary>
/// <remarks>Thread safety: every member may be read from any thread; <see cref="LeaseUntil"/> changes when a renewal succeeds.</remarks>
public sealed class PostgresLease
{
    private long _leaseUntilUtcTicks;

    internal PostgresLease(long messageId, string payload, DateTimeOffset enqueuedAt, string owner, long token, DateTimeOffset leaseUntil, int deliveryCount)
    {
        MessageId = messageId;
        Payload = payload;
        EnqueuedAt = enqueuedAt;
        Owner = owner;
        Token = token;
        DeliveryCount = deliveryCount;
        _leaseUntilUtcTicks = leaseUntil.UtcTicks;
    }

    /// <summary>The message's id (the queue table's primary key).</summary>
    public long MessageId { get; }

    /// <summary>The message's payload.</summary>
    public string Payload { get; }

    /// <summary>When the message was enqueued, by the database's clock.</summary>
    public DateTimeOffset EnqueuedAt { get; }

    /// <summary>The lease owner recorded with this delivery.</summary>
    public string Owner { get; }

    /// <summary>The fencing token of this delivery: unique and increasing across the queue (from a sequence); a redelivery gets a new one.</summary>
    public long Token { get; }

    /// <summary>Which delivery of the message this is: 1 for the first; more after an expired lease or an abandonment.</summary>
    public int DeliveryCount { get; }

    /// <summary>When the lease ends by the database's clock, as of the receive or the latest successful renewal.</summary>
    public DateTimeOffset LeaseUntil
    {
        get => new(Volatile.Read(ref _leaseUntilUtcTicks), TimeSpan.Zero);
        internal set => Volatile.Write(ref _leaseUntilUtcTicks, value.UtcTicks);
    }

    /// <inheritdoc/>
    public override string ToString() => $"message {MessageId} (token {Token}, delivery {DeliveryCount})";
}
