using System;

namespace MessageBus;

/// <summary>The settings every lease queue over a server shares: where it is, the queue, and how it reconnects. Validated when the
/// queue is created, before it connects.</summary>
public abstract class LeaseQueueOptions
{
    /// <summary>The client's connection string (Npgsql's <c>Host=...;Password=...</c>, StackExchange.Redis's <c>host:port,password=...</c>).</summary>
    /// <value>The default value is <see langword="null"/>: it must be set.</value>
    public string? ConnectionString { get; set; }

    /// <summary>The queue's name: a PostgreSQL table, the prefix of a Redis queue's keys.</summary>
    /// <value>The default value is <c>message_queue</c>.</value>
    public string QueueName { get; set; } = "message_queue";

    /// <summary>Who holds the leases this queue object takes (stored with each delivery, for diagnosis only: fencing uses the token).</summary>
    /// <value>The default value is the machine name and the process id.</value>
    public string Owner { get; set; } = $"{Environment.MachineName}:{Environment.ProcessId}";

    /// <summary>How long one connection attempt may take (PostgreSQL: whole seconds, rounded up). A first attempt that the server
    /// accepts but does not complete (a busy machine or server) is retried within <see cref="ReconnectTimeout"/>.</summary>
    /// <value>The default value is 5 seconds.</value>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long an operation keeps retrying after its connection was lost (and the first connection, while the server
    /// accepts connections but does not complete them) before it gives up with a <see cref="QueueConnectionException"/>.</summary>
    /// <value>The default value is 30 seconds. <see cref="TimeSpan.Zero"/> turns retrying off.</value>
    public TimeSpan ReconnectTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The first back-off delay before retrying; each further attempt doubles it, up to <see cref="ReconnectMaxDelay"/>, with up to 50% random jitter.</summary>
    /// <value>The default value is 50 milliseconds.</value>
    public TimeSpan ReconnectInitialDelay { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The largest back-off delay between retries.</summary>
    /// <value>The default value is 2 seconds.</value>
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Checks the settings every queue shares; the queue checks its own (the connection string, the name's pattern).</summary>
    /// <param name="minConnectTimeout">The shortest connect timeout the client takes.</param>
    /// <exception cref="ArgumentException">The owner is empty, or a duration is out of its range (the message names both).</exception>
    public void Validate(TimeSpan minConnectTimeout)
    {
        if (string.IsNullOrWhiteSpace(Owner))
        {
            throw new ArgumentException("Owner must not be empty.");
        }

        RequireRange(ConnectTimeout, minConnectTimeout, TimeSpan.FromSeconds(1024), nameof(ConnectTimeout));
        RequireRange(ReconnectTimeout, TimeSpan.Zero, TimeSpan.FromDays(1), nameof(ReconnectTimeout));
        RequireRange(ReconnectInitialDelay, TimeSpan.FromMilliseconds(1), TimeSpan.FromMinutes(10), nameof(ReconnectInitialDelay));
        RequireRange(ReconnectMaxDelay, ReconnectInitialDelay, TimeSpan.FromMinutes(10), nameof(ReconnectMaxDelay));
    }

    /// <summary>Throws <see cref="ArgumentOutOfRangeException"/> naming <paramref name="name"/>, its value and the range, unless <paramref name="value"/> is in it.</summary>
    public static void RequireRange(TimeSpan value, TimeSpan min, TimeSpan max, string name)
    {
        if (value < min || value > max)
        {
            throw new ArgumentOutOfRangeException(name, value, $"{name} is {value}; the valid range is {min} to {max}.");
        }
    }
}
