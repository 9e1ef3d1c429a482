namespace MessageBus;

/// <summary>
/// What the broker recorded, not what any worker believes: each count is updated in the same atomic step that decides (a statement,
/// a script, the in-memory bus's lock), so a worker that crashes, or whose reply is lost, cannot make them disagree with what
/// happened. Nothing is lost when <c>Completed + Available == Enqueued</c> and <c>Leased == 0</c> after the workers have stopped.
/// </summary>
/// <param name="Enqueued">Messages put on the queue.</param>
/// <param name="Delivered">Deliveries, first ones and redeliveries.</param>
/// <param name="Redelivered">Deliveries of a message that had been delivered before (its lease expired or was abandoned).</param>
/// <param name="Completed">Messages completed (each at most once).</param>
/// <param name="RejectedCompletes">Completes refused because the delivery was no longer current: duplicate or wasted work.</param>
/// <param name="FailedRenewals">Renewals refused because the delivery was no longer current.</param>
/// <param name="Abandoned">Deliveries handed back by their holder.</param>
/// <param name="Leased">Messages delivered and not completed now (an expired lease still counts until the message is taken again
/// or, on Redis, the stalled check moves it back).</param>
/// <param name="Available">Messages neither completed nor leased now.</param>
/// <param name="ExpiredRedeliveries">The part of <paramref name="Redelivered"/> whose previous holder lost it without handing it
/// back: its lease expired (or its channel closed).</param>
public sealed record BusCounts(
    long Enqueued,
    long Delivered,
    long Redelivered,
    long Completed,
    long RejectedCompletes,
    long FailedRenewals,
    long Abandoned,
    long Leased,
    long Available,
    long ExpiredRedeliveries);
