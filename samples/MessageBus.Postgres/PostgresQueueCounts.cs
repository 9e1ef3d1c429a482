namespace MessageBus.Postgres;

/// <summary>
/// The queue's counts as the database records them (not as any worker believes): each statement updates the message's row in the
/// same statement that decides, so a worker that crashes, or whose reply is lost, cannot make them disagree with what happened.
/// The first nine match the in-memory bus's <c>BusCounts</c> one for one. Nothing is lost when
/// <c>Completed + Available == Enqueued</c> and <c>Leased == 0</c> after the workers have stopped.
/// </summary>
/// <param name="Enqueued">Messages in the table.</param>
/// <param name="Delivered">Deliveries: every receive that took a message, first deliveries and redeliveries.</param>
/// <param name="Redelivered">Deliveries of a message delivered before (its lease expired or was abandoned).</param>
/// <param name="Completed">Messages completed, each once.</param>
/// <param name="RejectedCompletes">Completions refused: a stale token, an expired lease, or a message another delivery completed (duplicate work).</param>
/// <param name="FailedRenewals">Renewals refused: a stale token, an expired lease, or a completed message.</param>
/// <param name="Abandoned">Leases released by their holder before they expired.</param>
/// <param name="Leased">Messages not completed whose lease is set (an expired lease still counts until the message is taken again).</param>
/// <param name="Available">Messages neither completed nor leased.</param>
/// <param name="ExpiredRedeliveries">The part of <paramref name="Redelivered"/> whose previous lease had expired: its holder stopped renewing in time.</param>
public sealed record PostgresQueueCounts(
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
