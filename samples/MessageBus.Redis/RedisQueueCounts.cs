namespace MessageBus.Redis;

/// <summary>
/// The queue's counts as the server records them (not as any worker believes): each script that decides counts in the same atomic
/// step, so a worker that crashes, or whose reply is lost, cannot make them disagree with what happened. The first nine match the
/// in-memory bus's <c>BusCounts</c> one for one. Nothing is lost when <c>Completed + Available == Enqueued</c> and
/// <c>Leased == 0</c> after the workers have stopped (and, if a lease expired, the stalled check has run).
/// </summary>
/// <param name="Enqueued">Messages enqueued since the queue was created or purged.</param>
/// <param name="Delivered">Deliveries: every receive that took a message, first deliveries and redeliveries.</param>
/// <param name="Redelivered">Deliveries of a message delivered before (its lease expired or was abandoned).</param>
/// <param name="Completed">Messages completed, each once.</param>
/// <param name="RejectedCompletes">Completions refused: a stale token or an expired lock (duplicate or wasted work).</param>
/// <param name="FailedRenewals">Renewals refused: a stale token or an expired lock.</param>
/// <param name="Abandoned">Leases released by their holder before they expired.</param>
/// <param name="Leased">Messages in the active list (an expired lock still counts until the stalled check moves the message back).</param>
/// <param name="Available">Messages in the waiting list.</param>
/// <param name="ExpiredRedeliveries">The part of <paramref name="Redelivered"/> whose previous lease had expired (the stalled check moved the message back).</param>
public sealed record RedisQueueCounts(
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
