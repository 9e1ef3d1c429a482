using System;
using MessageBus;

namespace MessageBus.Redis;

/// <summary>Settings of a <see cref="RedisLeaseQueue"/>: <see cref="LeaseQueueOptions.ConnectionString"/> is StackExchange.Redis's
/// (<c>host:port,password=...</c>), and every key of the queue starts with <c>{QueueName}:</c> (letters, digits, <c>_</c>,
/// <c>-</c> and <c>.</c>, at most 100). The connect timeout replaces the string's <c>connectTimeout</c> and also bounds each of the
/// multiplexer's reconnection attempts after an outage (after a restart it took about half of it): retrying a slow first connection
/// within the reconnect timeout is better than raising it.</summary>
public sealed class RedisLeaseQueueOptions : LeaseQueueOptions
{
    /// <summary>
    /// How often the queue object, once it has received a message, runs the stalled check (<see cref="RedisLeaseQueue.CheckStalledAsync"/>):
    /// messages whose lock expired go back to the front of the queue. The check is guarded on the server, so however many workers
    /// run it, it runs about once per interval. A redelivery after an expired lease waits up to one interval more.
    /// </summary>
    /// <value>The default value is 1 second. <see langword="null"/> turns the periodic check off (call <see cref="RedisLeaseQueue.CheckStalledAsync"/> yourself).</value>
    public TimeSpan? StalledCheckInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The client name the queue's connections carry (<c>CLIENT LIST</c> shows it).</summary>
    /// <value>The default value is <see langword="null"/>: the configuration string's <c>name</c>, or StackExchange.Redis's default.</value>
    public string? ClientName { get; set; }
}
