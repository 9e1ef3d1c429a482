using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// A broker's queue as a worker uses it: take a message, keep the deliveries it holds, complete or abandon each, and the broker's
/// counts. <see cref="LeaseQueueBus"/> puts any of them behind <see cref="IMessageBus"/>.
/// </summary>
/// <remarks>
/// <para>Two shapes of broker fit. A <b>lease queue</b> (the PostgreSQL and Redis queues; Azure Service Bus peek-lock, SQS) leases
/// each delivery for a time judged by its own clock and fences it with a token: renewing extends the lease, and once it lapses
/// every call with the old token is refused. A <b>consumer with a prefetch</b> (RabbitMQ) holds a delivery while the channel that
/// delivered it is open: there renewing only checks that it still is (refused once the channel closed, after which the broker
/// redelivers), complete acknowledges, abandon requeues, and <c>leaseDuration</c> is ignored.</para>
/// <para>Every call is decided by the broker; a refusal is <see langword="false"/>, never an exception. A broker that cannot be
/// reached once the queue's own reconnection is spent throws the queue's connection exception.</para>
/// <para>Thread safety: every member may be called from any thread, concurrently.</para>
/// </remarks>
public interface ILeaseQueue
{
    /// <summary>Takes the next message available now and holds it for <paramref name="leaseDuration"/> (a lease queue; a
    /// consumer with a prefetch holds it until it is completed, abandoned or its channel closes).</summary>
    /// <param name="leaseDuration">How long the lease lasts unless renewed.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply (the broker may still have delivered a message; its lease
    /// then expires, or its channel's closing returns it).</param>
    /// <returns>The delivery, with a new <see cref="Lease.Token"/>; <see langword="null"/> when no message is available now.</returns>
    Task<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default);

    /// <summary>
    /// Renews every lease in <paramref name="leases"/> with as few requests as the broker allows (PostgreSQL: one statement; Redis:
    /// one script), each renewed or refused on its own: refused when it is no longer the message's current delivery (expired,
    /// abandoned, redelivered, completed; or its channel closed). A refusal is counted (<see cref="BusCounts.FailedRenewals"/>).
    /// </summary>
    /// <param name="leases">Deliveries this queue returned; each message at most once.</param>
    /// <param name="leaseDuration">The new lease's length from the broker's now.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply.</param>
    /// <returns>For each lease in order, whether it was renewed: on <see langword="false"/> the caller must stop working on it.</returns>
    Task<bool[]> RenewAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default);

    /// <summary>Completes the message (acknowledges it): it is never delivered again.</summary>
    /// <returns><see langword="false"/> if the delivery is no longer current: the work was done in vain and the message is (or
    /// will be) delivered again; counted (<see cref="BusCounts.RejectedCompletes"/>). Completing again with the delivery that
    /// completed it returns <see langword="true"/> and counts nothing (a call retried after a lost reply).</returns>
    Task<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default);

    /// <summary>Hands the message back at once (stopping): the next receive may take it, rather than after the lease expires.</summary>
    /// <returns><see langword="false"/> if the delivery was no longer current (nothing to hand back).</returns>
    Task<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default);

    /// <summary>The broker's own counts for the queue, whatever any worker believes.</summary>
    /// <param name="cancellationToken">Abandons the wait for the reply.</param>
    Task<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default);
}
