using System;

namespace MessageBus.Redis;

/// <summary>Settings of a <see cref="RedisLeaseQueue"/>. Validated when the queue is created, before it connects.</summary>
public sealed class RedisLeaseQueueOptions
{
    /// <summary>The StackExchange.Redis configuration string (<c>host:port,password=...</c>).</summary>
    /// <value>The default value is <see langword="null"/>: it must be set.</value>
    public string? ConnectionString { get; set; }

    /// <summary>The queue's name: every key of the queue starts with <c>{QueueName}:</c>. Letters, digits, <c>_</c>, <c>-</c> and <c>.</c>, at most 100.</summary>
    /// <value>The default value is <c>message_queue</c>.</value>
    public string QueueName { get; set; } = "message_queue";

    /// <summary>Who holds the leases this queue object takes (stored with each delivery, for diagnosis only: fencing uses the token).</summary>
    /// <value>The default value is the machine name and the process id.</value>
    public string Owner { get; set; } = $"{Environment.MachineName}:{Environment.ProcessId}";

    /// <summary>
    /// How long one connection attempt may take: the first connection's, and each of the multiplexer's reconnection attempts after
    /// an outage. A first attempt that the server accepts but does not complete (a busy machine or server) is retried within
    /// <see cref="ReconnectTimeout"/>; raising this instead also slows the recovery from an outage, since StackExchange.Redis's
    /// reconnection waits on the attempt it started while the server was away (after a restart, about half this timeout).
    /// </summary>
    /// <value>The default value is 5 seconds.</value>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long an operation keeps retrying after its connection was lost (and the first connection, while the server
    /// accepts connections but does not complete them) before it gives up with a <see cref="RedisQueueConnectionException"/>.</summary>
    /// <value>The default value is 30 seconds. <see cref="TimeSpan.Zero"/> turns retrying off.</value>
    public TimeSpan ReconnectTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The first back-off delay before retrying; each further attempt doubles it, up to <see cref="ReconnectMaxDelay"/>, with up to 50% random jitter.</summary>
    /// <value>The default value is 50 milliseconds.</value>
    public TimeSpan ReconnectInitialDelay { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The largest back-off delay between retries.</summary>
    /// <value>The default value is 2 seconds.</value>
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(2);

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
