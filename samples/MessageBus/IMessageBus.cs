using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// A broker that leases messages, as Azure Service Bus peek-lock, SQS visibility timeouts and PostgreSQL lease-column queues do.
/// The broker is the authority on every lease, judged by its own clock; a worker only asks.
/// </summary>
/// <remarks>
/// <para>Every delivery carries a new fencing token (<see cref="Lease.Token"/>). Renew and complete succeed only while that token is the
/// message's current one and its lease has not expired: once a lease lapses or is abandoned, the old holder can no longer renew or
/// complete, whatever it believes. An expired or abandoned message is delivered again, with a new token and its delivery count plus one.</para>
/// <para>The broker counts everything itself (<see cref="GetCountsAsync"/>), so results never depend on what a worker says it did.</para>
/// <para>Thread safety: every member may be called from any thread.</para>
/// </remarks>
public interface IMessageBus
{
    /// <summary>Takes the next message that is not leased (or whose lease expired) and leases it for <paramref name="leaseDuration"/>.</summary>
    /// <param name="leaseDuration">How long the lease lasts unless renewed.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply (the broker may still have leased a message; it then expires).</param>
    /// <returns>The lease, or <see langword="null"/> when no message is available now.</returns>
    ValueTask<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default);

    /// <summary>Extends a lease to <paramref name="leaseDuration"/> from now (the broker's now).</summary>
    /// <returns><see langword="false"/> if the lease is no longer current (expired, abandoned, redelivered or completed): the
    /// caller must stop working on the message. Counted as a failed renewal.</returns>
    ValueTask<bool> RenewAsync(Lease lease, TimeSpan leaseDuration, CancellationToken cancellationToken = default);

    /// <summary>
    /// Renews several leases with one request where the broker allows it (Redis: one script; PostgreSQL: one statement), as a worker
    /// holding many leases does once per interval (BullMQ's lock extender). Each lease is renewed or refused on its own, exactly as
    /// by <see cref="RenewAsync"/>; the default implementation calls <see cref="RenewAsync"/> for each in turn.
    /// </summary>
    /// <returns>For each lease in order, whether it was renewed.</returns>
    async ValueTask<bool[]> RenewAllAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(leases);
        var renewed = new bool[leases.Count];
        for (int i = 0; i < renewed.Length; i++)
        {
            renewed[i] = await RenewAsync(leases[i], leaseDuration, cancellationToken).ConfigureAwait(false);
        }

        return renewed;
    }

    /// <summary>Completes a message: it is never delivered again.</summary>
    /// <returns><see langword="false"/> if the lease is no longer current: the work was done in vain (another holder owns or owned
    /// the message). Counted as a rejected complete.</returns>
    ValueTask<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default);

    /// <summary>Releases a lease at once, so that another worker can take the message now rather than after the lease expires
    /// (used on graceful shutdown).</summary>
    /// <returns><see langword="false"/> if the lease was no longer current (nothing to release).</returns>
    ValueTask<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default);

    /// <summary>Gets the broker's own counts. Asynchronous because a real broker is asked over the network (the PostgreSQL bus
    /// runs one query); the in-memory bus answers at once.</summary>
    /// <param name="cancellationToken">Abandons the wait for the reply.</param>
    ValueTask<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default);
}
