using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// An <see cref="IMessageBus"/> in the process's memory: the embedded default, needing nothing installed. Each call can take a
/// simulated network latency; the broker decides when the request arrives, by its own clock, and the reply comes after the latency.
/// </summary>
/// <remarks>
/// Invariant (guarded by <c>_gate</c>): every message not completed is in exactly one place: <c>_ready</c> (available) or
/// <c>_leased</c> (under a lease, possibly expired). An expired lease is reclaimed on the next receive and redelivered with a new
/// token; an abandoned one goes back to the front of <c>_ready</c> at once.
/// </remarks>
public sealed class InMemoryMessageBus : IMessageBus
{
    private readonly object _gate = new();
    private readonly TimeProvider _time;
    private readonly TimeSpan _latency;
    private readonly LinkedList<Message> _ready = new();
    private readonly List<Message> _leased = [];
    private long _nextId;
    private long _nextToken;
    private long _delivered;
    private long _redelivered;
    private long _completed;
    private long _rejectedCompletes;
    private long _failedRenewals;
    private long _abandoned;
    private long _expiredRedeliveries;

    /// <summary>Creates an empty bus.</summary>
    /// <param name="latency">How long each call's reply takes (zero: at once).</param>
    /// <param name="time">The broker's clock; <see cref="TimeProvider.System"/> by default.</param>
    public InMemoryMessageBus(TimeSpan latency = default, TimeProvider? time = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(latency, TimeSpan.Zero);
        _latency = latency;
        _time = time ?? TimeProvider.System;
    }

    /// <summary>Puts a message on the queue.</summary>
    /// <returns>The message's id.</returns>
    public long Enqueue(string payload)
    {
        ArgumentNullException.ThrowIfNull(payload);
        lock (_gate)
        {
            var message = new Message(++_nextId, payload);
            _ready.AddLast(message);
            return message.Id;
        }
    }

    /// <inheritdoc/>
    public async ValueTask<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(leaseDuration, TimeSpan.Zero);
        Lease? lease = Deliver(leaseDuration);
        await ReplyAsync(cancellationToken).ConfigureAwait(false);
        return lease;
    }

    /// <inheritdoc/>
    public ValueTask<bool> RenewAsync(Lease lease, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(leaseDuration, TimeSpan.Zero);
        return DecideAsync(lease, message => message.LeasedUntil = _time.GetUtcNow() + leaseDuration, () => _failedRenewals++, cancellationToken);
    }

    /// <inheritdoc/>
    public ValueTask<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default) =>
        DecideAsync(
            lease,
            message =>
            {
                message.Completed = true;
                message.Token = 0;
                _leased.Remove(message);
                _completed++;
            },
            () => _rejectedCompletes++,
            cancellationToken);

    /// <inheritdoc/>
    public ValueTask<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default) =>
        DecideAsync(
            lease,
            message =>
            {
                message.Token = 0;
                _leased.Remove(message);
                _ready.AddFirst(message);
                _abandoned++;
            },
            refused: null,
            cancellationToken);

    /// <inheritdoc/>
    public ValueTask<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            return ValueTask.FromResult(new BusCounts(_nextId, _delivered, _redelivered, _completed, _rejectedCompletes, _failedRenewals, _abandoned, _leased.Count, _ready.Count, _expiredRedeliveries));
        }
    }

    private Lease? Deliver(TimeSpan leaseDuration)
    {
        lock (_gate)
        {
            DateTimeOffset now = _time.GetUtcNow();
            for (int i = _leased.Count - 1; i >= 0; i--)
            {
                if (_leased[i].LeasedUntil <= now)
                {
                    _ready.AddFirst(_leased[i]);
                    _leased[i].Token = 0;
                    _leased[i].Expired = true;
                    _leased.RemoveAt(i);
                }
            }

            if (_ready.First is not { } node)
            {
                return null;
            }

            Message message = node.Value;
            _ready.RemoveFirst();
            _leased.Add(message);
            message.Token = ++_nextToken;
            message.DeliveryCount++;
            message.LeasedUntil = now + leaseDuration;
            _delivered++;
            if (message.DeliveryCount > 1)
            {
                _redelivered++;
                _expiredRedeliveries += message.Expired ? 1 : 0;
            }

            message.Expired = false;
            return new Lease(message.Id, message.Payload, message.Token, message.DeliveryCount, LeaseUntil: message.LeasedUntil);
        }
    }

    // Under the gate, one decision on a lease: current (the message's own token, not expired) or refused; the reply comes after
    // the latency.
    private async ValueTask<bool> DecideAsync(Lease lease, Action<Message> current, Action? refused, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(lease);
        bool decided;
        lock (_gate)
        {
            decided = TryGetCurrent(lease, out Message? message);
            if (decided)
            {
                current(message!);
            }
            else
            {
                refused?.Invoke();
            }
        }

        await ReplyAsync(cancellationToken).ConfigureAwait(false);
        return decided;
    }

    // Current: the message is leased with this very token, and the lease has not expired by the broker's clock.
    private bool TryGetCurrent(Lease lease, out Message? message)
    {
        message = _leased.Find(m => m.Id == lease.MessageId);
        return message is not null && message.Token == lease.Token && _time.GetUtcNow() < message.LeasedUntil;
    }

    private Task ReplyAsync(CancellationToken cancellationToken)
        => _latency == TimeSpan.Zero ? Task.CompletedTask : Task.Delay(_latency, _time, cancellationToken);

    private sealed class Message(long id, string payload)
    {
        public long Id { get; } = id;

        public string Payload { get; } = payload;

        public long Token { get; set; }

        public int DeliveryCount { get; set; }

        public DateTimeOffset LeasedUntil { get; set; }

        public bool Completed { get; set; }

        public bool Expired { get; set; } // back in _ready because its lease expired, not abandoned
    }
}
