using System;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>One lease at a time, for code that holds one (a worker holding many renews them together: <see cref="ILeaseQueue.RenewAsync"/>).</summary>
public static class LeaseQueueExtensions
{
    /// <summary>Renews one lease, as <see cref="ILeaseQueue.RenewAsync"/> renews many.</summary>
    /// <returns><see langword="false"/> if the lease is lost: the caller must stop working on the message.</returns>
    public static async Task<bool> RenewAsync(this ILeaseQueue queue, Lease lease, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(queue);
        ArgumentNullException.ThrowIfNull(lease);
        return (await queue.RenewAsync([lease], leaseDuration, cancellationToken).ConfigureAwait(false))[0];
    }
}
