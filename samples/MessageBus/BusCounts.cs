namespace MessageBus;

/// <summary>What the broker saw. Nothing is lost when <c>Completed + Available == Enqueued</c> and <c>Leased == 0</c> after the
/// workers have stopped.</summary>
/// <param name="Enqueued">Messages put on the queue.</param>
/// <param name="Delivered">Deliveries, first ones and redeliveries.</param>
/// <param name="Redelivered">Deliveries of a message that had been delivered before (its lease expired or was abandoned).</param>
/// <param name="Completed">Messages completed (each at most once).</param>
/// <param name="RejectedCompletes">Completes refused because the lease was no longer current: duplicate or wasted work.</param>
/// <param name="FailedRenewals">Renewals refused because the lease was no longer current.</param>
/// <param name="Abandoned">Leases released by their holder.</param>
/// <param name="Leased">Messages under a lease now (an expired lease still counts until the message is taken again).</param>
/// <param name="Available">Messages neither completed nor leased now.</param>
public sealed record BusCounts(
    long Enqueued,
    long Delivered,
    long Redelivered,
    long Completed,
    long RejectedCompletes,
    long FailedRenewals,
    long Abandoned,
    long Leased,
    long Available);
