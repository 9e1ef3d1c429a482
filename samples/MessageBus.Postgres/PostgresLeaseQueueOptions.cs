using System;

namespace MessageBus.Postgres;

/// <summary>Settings of a <see cref="PostgresLeaseQueue"/>. Validated when the queue is created, before it connects.</summary>
public sealed class PostgresLeaseQueueOptions
{
    /// <summary>The Npgsql connection string (<c>Host=...;Port=...;Database=...;Username=...;Password=...</c>).</summary>
    /// <value>The default value is <see langword="null"/>: it must be set.</value>
    public string? ConnectionString { get; set; }

    /// <summary>The queue's table; the fencing-token sequence is named after it. Lower-case letters, digits and underscores, at most 40.</summary>
    /// <value>The default value is <c>message_queue</c>.</value>
    public string QueueName { get; set; } = "message_queue";

    /// <summary>Who holds the leases this queue object takes (stored in <c>lease_owner</c>, for diagnosis only: fencing uses the token).</summary>
    /// <value>The default value is the machine name and the process id.</value>
    public string Owner { get; set; } = $"{Environment.MachineName}:{Environment.ProcessId}";

    /// <summary>How long one attempt to open a connection may take (Npgsql's <c>Timeout</c>, whole seconds, rounded up).</summary>
    /// <value>The default value is 5 seconds.</value>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long an operation keeps reconnecting after its connection was lost (and the first connection, while the server
    /// accepts connections but does not start the session) before it gives up with a <see cref="PostgresConnectionException"/>.</summary>
    /// <value>The default value is 30 seconds. <see cref="TimeSpan.Zero"/> turns reconnection off.</value>
    public TimeSpan ReconnectTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The first back-off delay before reconnecting; each further attempt doubles it, up to <see cref="ReconnectMaxDelay"/>, with up to 50% random jitter.</summary>
    /// <value>The default value is 50 milliseconds.</value>
    public TimeSpan ReconnectInitialDelay { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The largest back-off delay between reconnection attempts.</summary>
    /// <value>The default value is 2 seconds.</value>
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(2);
}
