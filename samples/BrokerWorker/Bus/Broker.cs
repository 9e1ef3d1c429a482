using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using MessageBus;

namespace BrokerWorker.Bus;

/// <summary>
/// A real broker as the coordinator and the worker processes use it: one queue (one mode's), its <see cref="IMessageBus"/>, its
/// set-up, and what the bus's interface does not say (expired redeliveries, reconnections, the server's CPU).
/// </summary>
public abstract class Broker : IAsyncDisposable
{
    /// <summary>The broker's name for people: PostgreSQL, Redis.</summary>
    public abstract string Name { get; }

    /// <summary>The queue's name (a PostgreSQL table, a Redis key prefix).</summary>
    public abstract string Queue { get; }

    /// <summary>The samples' bus over the queue.</summary>
    public abstract IMessageBus Bus { get; }

    /// <summary>How often this process's operations lost their connection and retried.</summary>
    public abstract long Reconnects { get; }

    /// <summary>Connects, creates the queue if missing, and (<paramref name="purge"/>) empties it.</summary>
    public abstract Task SetUpAsync(bool purge);

    /// <summary>Enqueues messages, in order.</summary>
    public abstract Task EnqueueAsync(IReadOnlyList<string> payloads);

    /// <summary>Redeliveries whose previous lease had expired, as the broker counts them.</summary>
    public abstract Task<long> ExpiredRedeliveriesAsync();

    /// <summary>The server's CPU time so far (all its processes or threads), or null when it cannot be read from here.</summary>
    public abstract Task<TimeSpan?> ServerCpuAsync();

    /// <summary>Drops the queue.</summary>
    public abstract Task DropAsync();

    /// <inheritdoc/>
    public abstract ValueTask DisposeAsync();
}
