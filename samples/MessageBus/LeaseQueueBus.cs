using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// The samples' <see cref="IMessageBus"/> over any <see cref="ILeaseQueue"/> (PostgreSQL, Redis, ...): the queue's leases, fencing
/// tokens and counts, unchanged. Renewals from many messages in flight go out together: while one renewal request is on its way,
/// the renewals asked for meanwhile wait and then go in one request (a group commit), so a worker holding N leases sends far fewer
/// than N requests per interval without delaying the first.
/// </summary>
/// <remarks>
/// <para>The bus does not own the queue: dispose the queue when done. A renewal's cancellation token is not observed once it has
/// joined a batch; a batch that fails fails every renewal in it with the queue's exception.</para>
/// <para>Thread safety: every member may be called from any thread, concurrently.</para>
/// </remarks>
/// <param name="queue">The queue to adapt.</param>
public sealed class LeaseQueueBus(ILeaseQueue queue) : IMessageBus
{
    private readonly ILeaseQueue _queue = queue ?? throw new ArgumentNullException(nameof(queue));
    private readonly Lock _gate = new();
    private List<PendingRenewal>? _waiting; // renewals asked for while a batch is in flight
    private bool _inFlight;

    /// <summary>The queue underneath.</summary>
    public ILeaseQueue Queue => _queue;

    /// <inheritdoc/>
    public ValueTask<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default) =>
        new(_queue.ReceiveAsync(leaseDuration, cancellationToken));

    /// <inheritdoc/>
    public ValueTask<bool> RenewAsync(Lease lease, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(leaseDuration, TimeSpan.Zero);
        var pending = new PendingRenewal(lease, leaseDuration);

        // Under the gate, a renewal either joins the ones gathered for the next request or becomes the sender: the sender clears
        // the flag under the same gate, and only when nothing waits, so no renewal is left behind a request that has ended.
        lock (_gate)
        {
            if (_inFlight)
            {
                (_waiting ??= []).Add(pending);
                return new(pending.Result.Task);
            }

            _inFlight = true;
        }

        _ = SendRenewalsAsync([pending]);
        return new(pending.Result.Task);
    }

    /// <inheritdoc/>
    public ValueTask<bool[]> RenewAllAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default) =>
        new(_queue.RenewAsync(leases ?? throw new ArgumentNullException(nameof(leases)), leaseDuration, cancellationToken));

    /// <inheritdoc/>
    public ValueTask<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default) =>
        new(_queue.CompleteAsync(lease ?? throw new ArgumentNullException(nameof(lease)), cancellationToken));

    /// <inheritdoc/>
    public ValueTask<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default) =>
        new(_queue.AbandonAsync(lease ?? throw new ArgumentNullException(nameof(lease)), cancellationToken));

    /// <inheritdoc/>
    public ValueTask<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default) => new(_queue.GetCountsAsync(cancellationToken));

    // One batch at a time: each round sends what was asked for during the previous one's round trip, until nothing waits.
    private async Task SendRenewalsAsync(List<PendingRenewal> batch)
    {
        while (true)
        {
            foreach (IGrouping<TimeSpan, PendingRenewal> sameLength in batch.GroupBy(p => p.Length))
            {
                PendingRenewal[] group = [.. sameLength];
                try
                {
                    bool[] renewed = await _queue.RenewAsync([.. group.Select(p => p.Lease)], sameLength.Key).ConfigureAwait(false);
                    for (int i = 0; i < group.Length; i++)
                    {
                        group[i].Result.TrySetResult(renewed[i]);
                    }
                }
                catch (Exception e)
                {
                    foreach (PendingRenewal pending in group)
                    {
                        pending.Result.TrySetException(e);
                    }
                }
            }

            lock (_gate)
            {
                if (_waiting is not { Count: > 0 } next)
                {
                    _inFlight = false;
                    return;
                }

                batch = next;
                _waiting = null;
            }
        }
    }

    private sealed class PendingRenewal(Lease lease, TimeSpan length)
    {
        public Lease Lease { get; } = lease;

        public TimeSpan Length { get; } = length;

        public TaskCompletionSource<bool> Result { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
