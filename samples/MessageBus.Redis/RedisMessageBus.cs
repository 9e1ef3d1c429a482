using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus.Redis;

/// <summary>
/// The <see cref="IMessageBus"/> of the samples over a <see cref="RedisLeaseQueue"/>: the same leases, fencing tokens and counts,
/// kept by Redis. Renewals from many messages in flight go out together: while one renewal script is on its way, the renewals
/// asked for meanwhile wait and then go in one script (a group commit), so a worker holding N leases sends far fewer than N scripts
/// per interval without delaying the first.
/// </summary>
/// <remarks>Thread safety: every member may be called from any thread, concurrently. A renewal's cancellation token is not
/// observed once it has joined a batch.</remarks>
public sealed class RedisMessageBus(RedisLeaseQueue queue) : IMessageBus
{
    private readonly RedisLeaseQueue _queue = queue ?? throw new ArgumentNullException(nameof(queue));
    private readonly Lock _gate = new();
    private List<PendingRenewal>? _waiting; // renewals asked for while a batch is in flight
    private bool _inFlight;

    /// <summary>The queue underneath.</summary>
    public RedisLeaseQueue Queue => _queue;

    /// <inheritdoc/>
    public async ValueTask<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        RedisLease? lease = await _queue.ReceiveAsync(leaseDuration, cancellationToken).ConfigureAwait(false);
        return lease is null ? null : new Lease(lease.MessageId, lease.Payload, lease.Token, lease.DeliveryCount);
    }

    /// <inheritdoc/>
    public ValueTask<bool> RenewAsync(Lease lease, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(leaseDuration, TimeSpan.Zero);
        var pending = new PendingRenewal(lease, leaseDuration);
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
        RedisQueueCounts c = await _queue.GetCountsAsync(cancellationToken).ConfigureAwait(false);
        return new BusCounts(c.Enqueued, c.Delivered, c.Redelivered, c.Completed, c.RejectedCompletes, c.FailedRenewals, c.Abandoned, c.Leased, c.Available, c.ExpiredRedeliveries);
    }

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
                    var pairs = new (long, long)[group.Length];
                    for (int i = 0; i < group.Length; i++)
                    {
                        pairs[i] = (group[i].Lease.MessageId, group[i].Lease.Token);
                    }

                    bool[] renewed = await _queue.RenewAsync(pairs, sameLength.Key).ConfigureAwait(false);
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
