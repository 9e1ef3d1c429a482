using System;
using System.Threading;
using System.Threading.Tasks;

namespace LeaseWorker;

/// <summary>
/// A message bus that hands out leases and is the authority on them. It records each lease's expiry; a refresh that reaches it after
/// the expiry fails, and an acknowledgement after the expiry is rejected: the message is lost (a real bus would redeliver it).
/// </summary>
/// <remarks>
/// <para>Each call is an I/O: the request reaches the bus at once and the bus decides then, by its own clock (a delivery
/// counts from when the receive completes); the reply takes the call's duration. The reply is a timer: by default the bus's
/// clock's, on the thread pool; a caller may pass its own (the priority mode passes its loop's). The bus's decisions never wait for
/// the worker's thread, so how busy the worker is changes only when its requests arrive, not the bus's clock.</para>
/// <para>Thread safety: every member may be called from any thread.</para>
/// </remarks>
public sealed class LeaseBus
{
    private readonly object _gate = new();
    private readonly TimeProvider _time;
    private readonly long _start;
    private readonly TimeSpan _receive;
    private readonly TimeSpan _refreshDuration;
    private readonly TimeSpan _refreshDelay;
    private readonly TimeSpan _leaseTimeout;
    private int _remaining;
    private int _received;
    private int _succeeded;
    private int _failedRefreshes;
    private int _rejectedAcks;
    private TimeSpan _worstLateness;

    /// <summary>Creates a bus holding <paramref name="messages"/> messages. Durations are as they run (already scaled).</summary>
    /// <param name="refreshDelay">The worker's refresh period; the bus uses it only to measure how late each refresh arrives.</param>
    public LeaseBus(int messages, TimeSpan receive, TimeSpan refreshDuration, TimeSpan refreshDelay, TimeSpan leaseTimeout, TimeProvider? time = null)
    {
        _time = time ?? TimeProvider.System;
        _start = _time.GetTimestamp();
        _remaining = messages;
        _receive = receive;
        _refreshDuration = refreshDuration;
        _refreshDelay = refreshDelay;
        _leaseTimeout = leaseTimeout;
    }

    /// <summary>Creates the bus of a run, on <paramref name="time"/> (the system clock by default; with --virtual-time the run's clock).</summary>
    public static LeaseBus For(Settings settings, TimeProvider? time = null) => new(
        settings.Messages,
        settings.Scaled(settings.Receive),
        settings.Scaled(settings.RefreshDuration),
        settings.Scaled(settings.RefreshDelay),
        settings.Scaled(settings.LeaseTimeout),
        time);

    /// <summary>The bus's clock.</summary>
    public TimeSpan Now => _time.GetElapsedTime(_start);

    /// <summary>
    /// Receives a message: the bus delivers the next message when the receive I/O completes, by its own clock, and starts its
    /// lease then (whenever the reply reaches the worker); null when empty.
    /// </summary>
    /// <param name="replyTimer">The timer that delivers the reply to the worker (it stands for the network); the bus's clock by default.</param>
    public Task<Lease?> ReceiveAsync(TimeProvider? replyTimer = null)
    {
        TimeSpan deliveredAt = Now + _receive;
        Lease? lease = null;
        lock (_gate)
        {
            if (_remaining > 0)
            {
                _remaining--;
                _received++;
                lease = new Lease(_received, deliveredAt, deliveredAt + _leaseTimeout);
            }
        }

        return Reply(_receive, replyTimer, lease);
    }

    /// <summary>Asks the bus to extend a lease. The bus decides when the request arrives; false if the lease had already expired.</summary>
    /// <param name="replyTimer">The timer that delivers the reply to the worker; the bus's clock by default.</param>
    public Task<bool> RefreshAsync(Lease lease, TimeProvider? replyTimer = null)
    {
        ArgumentNullException.ThrowIfNull(lease);
        bool renewed = Renew(lease);
        return Reply(_refreshDuration, replyTimer, renewed);
    }

    /// <summary>Acknowledges a processed message. Rejected (false, the message is lost) if its lease had expired.</summary>
    /// <param name="replyTimer">The timer that delivers the reply to the worker; the bus's clock by default.</param>
    public Task<bool> AckAsync(Lease lease, TimeProvider? replyTimer = null)
    {
        ArgumentNullException.ThrowIfNull(lease);
        bool accepted = Complete(lease);
        return Reply(_refreshDuration, replyTimer, accepted);
    }

    /// <summary>
    /// The reply: <paramref name="value"/> after <paramref name="duration"/>, completed on whichever thread the timer fires on.
    /// </summary>
    /// <remarks>
    /// Not <c>await Task.Delay(...).ConfigureAwait(false)</c>: when the timer is a loop's, it fires on the loop with the loop's
    /// SynchronizationContext current, and the runtime never inlines a context-free continuation under a foreign context; it queues
    /// it to the thread pool, which a starved pool would never run. A synchronous continuation on the default scheduler is inlined
    /// wherever the timer fires: on a pool thread for the system's timers, as before, and on the loop for the loop's.
    /// </remarks>
    private Task<T> Reply<T>(TimeSpan duration, TimeProvider? replyTimer, T value) =>
        Task.Delay(duration, replyTimer ?? _time).ContinueWith(
            static (_, state) => (T)state!,
            value,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);

    /// <summary>The results so far. A delivered message that was never acknowledged counts as lost: its lease ran out.</summary>
    public BusTotals Totals()
    {
        lock (_gate)
        {
            return new BusTotals(_received, _succeeded, _received - _succeeded, _failedRefreshes, _rejectedAcks, _worstLateness);
        }
    }

    private bool Renew(Lease lease)
    {
        lock (_gate)
        {
            if (lease.State != LeaseState.Active)
            {
                return false;
            }

            // Lateness: how much longer than the worker's own refresh cycle this lease went without a renewal. The first cycle is
            // the refresh delay alone (counted from delivery); later ones also include the previous refresh's reply.
            TimeSpan now = Now;
            TimeSpan cycle = lease.Renewals == 0 ? _refreshDelay : _refreshDelay + _refreshDuration;
            TimeSpan lateness = now - lease.LastRenewal - cycle;
            if (lateness > _worstLateness)
            {
                _worstLateness = lateness;
            }

            if (now > lease.Expiry)
            {
                lease.State = LeaseState.Lost;
                _failedRefreshes++;
                return false;
            }

            lease.Expiry = now + _leaseTimeout;
            lease.LastRenewal = now;
            lease.Renewals++;
            return true;
        }
    }

    private bool Complete(Lease lease)
    {
        lock (_gate)
        {
            if (lease.State == LeaseState.Active && Now > lease.Expiry)
            {
                lease.State = LeaseState.Lost;
                _rejectedAcks++;
                return false;
            }

            if (lease.State != LeaseState.Active)
            {
                return lease.State == LeaseState.Completed;
            }

            lease.State = LeaseState.Completed;
            _succeeded++;
            return true;
        }
    }
}
