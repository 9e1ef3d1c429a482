using System;

namespace MessageBus;

/// <summary>A delivered message and the lease the worker holds on it.</summary>
/// <param name="MessageId">The message's id; the same on every delivery.</param>
/// <param name="Payload">The message's body.</param>
/// <param name="Token">The fencing token of this delivery: unique per delivery within the queue, and the only proof of ownership
/// the broker accepts. Opaque to the worker, which passes it back unchanged.</param>
/// <param name="DeliveryCount">1 on the first delivery, plus one on each redelivery (a broker that only flags a redelivery: 2).</param>
/// <param name="Priority">The message's priority as the broker carries it, higher more urgent (AMQP's <c>priority</c> property, or
/// a header); 0 when the broker has none. A worker maps it to a level of its own.</param>
/// <param name="LeaseUntil">When the lease ends by the broker's clock, as of the receive; <see langword="null"/> when the delivery
/// does not expire by time (held while its channel is open).</param>
public sealed record Lease(long MessageId, string Payload, long Token, int DeliveryCount, int Priority = 0, DateTimeOffset? LeaseUntil = null);
