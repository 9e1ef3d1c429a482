using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using MessageBus;

namespace BrokerWorker.Bus;

/// <summary>
/// A real broker as the coordinator and the worker processes use it: one queue (one mode's) behind the workers' <see cref="IMessageBus"/>
/// (<see cref="LeaseQueueBus"/> over the broker's <see cref="ILeaseQueue"/>), and what the workers' interface does not carry: set-up,
/// filling the queue, and for <c>--bus-cost</c> the plain client loop the bus is compared with.
/// </summary>
/// <param name="queue">The broker's queue; the broker owns it.</param>
/// <param name="where">The server for people, in one phrase: "PostgreSQL at host:port, database 'q', user 'u'".</param>
public abstract class Broker(ILeaseQueue queue, string where) : IAsyncDisposable
{
    /// <summary>The workers' bus over the queue.</summary>
    public IMessageBus Bus { get; } = new LeaseQueueBus(queue);

    /// <summary>The server for people, for a one-line error: "PostgreSQL at host:port, ...".</summary>
    public string Where => where;

    /// <summary>How often this process's operations lost their connection and retried.</summary>
    public abstract long Reconnects { get; }

    /// <summary>What <c>--bus-cost</c> compares the bus with, after the broker's name: "plain Npgsql loop (...)".</summary>
    public abstract string PlainLoop { get; }

    /// <summary>Connects, creates the queue if missing, and (<paramref name="purge"/>) empties it; otherwise warms a connection.</summary>
    public abstract Task SetUpAsync(bool purge);

    /// <summary>Enqueues messages, in order.</summary>
    public abstract Task EnqueueAsync(IReadOnlyList<string> payloads);

    /// <summary><c>--bus-cost</c>: receive + renew + complete cycles of the plain client loop on the filled queue for <paramref name="duration"/>.</summary>
    public abstract Task<(long Cycles, TimeSpan Elapsed)> PlainCyclesAsync(TimeSpan lease, TimeSpan duration);

    /// <summary>What the server promises for a write it has answered (an fsync per write, or none): the figures depend on it.</summary>
    public abstract Task<string> DurabilityAsync();

    /// <summary>Drops the queue.</summary>
    public abstract Task DropAsync();

    /// <inheritdoc/>
    public abstract ValueTask DisposeAsync();
}
