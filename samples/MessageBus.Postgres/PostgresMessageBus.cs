using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus.Postgres;

/// <summary>
/// A <see cref="PostgresLeaseQueue"/> behind the sample's <see cref="IMessageBus"/>, so that one worker's code runs on the in-memory
/// bus and on PostgreSQL alike. Every call is one statement, decided by the database's clock; the counts are the database's.
/// </summary>
/// <remarks>
/// <para>The adapter does not own the queue: dispose the queue when done. Fencing is the queue's: a <see cref="Lease"/> carries the
/// delivery's token, and renew, complete and abandon pass it back unchanged.</para>
/// <para>Connection faults surface as <see cref="PostgresConnectionException"/> once the queue's reconnection budget
/// (<see cref="PostgresLeaseQueueOptions.ReconnectTimeout"/>) is spent; until then the queue reconnects with back-off.</para>
/// <para>Thread safety: every member may be called from any thread, concurrently.</para>
/// </remarks>
/// <param name="queue">The queue to adapt.</param>
public sealed class PostgresMessageBus(PostgresLeaseQueue queue) : IMessageBus
{
    private readonly PostgresLeaseQueue _queue = queue ?? throw new ArgumentNullException(nameof(queue));

    /// <summary>The adapted queue (for what <see cref="IMessageBus"/> does not carry: enqueueing, <see cref="PostgresQueueCounts.ExpiredRedeliveries"/>, reconnects).</summary>
    public PostgresLeaseQueue Queue => _queue;

    /// <inheritdoc/>
    public async ValueTask<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        PostgresLease? lease = await _queue.ReceiveAsync(leaseDuration, cancellationToken).ConfigureAwait(false);
        return lease is null ? null : new Lease(lease.MessageId, lease.Payload, lease.Token, lease.DeliveryCount);
    }

    /// <inheritdoc/>
    public ValueTask<bool> RenewAsync(Lease lease, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        return new(_queue.RenewAsync(lease.MessageId, lease.Token, leaseDuration, cancellationToken));
    }

    /// <inheritdoc/>
    public async ValueTask<bool[]> RenewAllAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(leases);
        var pairs = new (long, long)[leases.Count];
        for (int i = 0; i < pairs.Length; i++)
        {
            pairs[i] = (leases[i].MessageId, leases[i].Token);
        }

        return await _queue.RenewAsync(pairs, leaseDuration, cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public ValueTask<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        return new(_queue.CompleteAsync(lease.MessageId, lease.Token, cancellationToken));
    }

    /// <inheritdoc/>
    public ValueTask<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        return new(_queue.AbandonAsync(lease.MessageId, lease.Token, cancellationToken));
    }

    /// <inheritdoc/>
    public async ValueTask<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        PostgresQueueCounts c = await _queue.GetCountsAsync(cancellationToken).ConfigureAwait(false);
        return new BusCounts(c.Enqueued, c.Delivered, c.Redelivered, c.Completed, c.RejectedCompletes, c.FailedRenewals, c.Abandoned, c.Leased, c.Available, c.ExpiredRedeliveries);
    }
}
