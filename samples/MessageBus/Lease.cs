namespace MessageBus;

/// <summary>A delivered message and the lease the worker holds on it.</summary>
/// <param name="MessageId">The message's id; the same on every delivery.</param>
/// <param name="Payload">The message's body.</param>
/// <param name="Token">The fencing token of this delivery: unique per delivery, and the only proof of ownership the broker accepts.</param>
/// <param name="DeliveryCount">1 on the first delivery, plus one on each redelivery.</param>
public sealed record Lease(long MessageId, string Payload, long Token, int DeliveryCount);
