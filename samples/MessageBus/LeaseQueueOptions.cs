using System;
using System.Collections.Generic;
using System.Text.RegularExpressions;

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
    /// accepts connections but does not complete them) before it gives up with a <see cref="QueueConnectionException"/>. It is
    /// retried at least once, so the give-up may come one attempt and one back-off after this.</summary>
    /// <value>The default value is 30 seconds. <see cref="TimeSpan.Zero"/> turns retrying off.</value>
    public TimeSpan ReconnectTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The first back-off delay before retrying; each further attempt doubles it, up to <see cref="ReconnectMaxDelay"/>, with up to 50% random jitter.</summary>
    /// <value>The default value is 50 milliseconds.</value>
    public TimeSpan ReconnectInitialDelay { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The largest back-off delay between retries.</summary>
    /// <value>The default value is 2 seconds.</value>
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Checks the settings every queue shares, and the queue's name against the queue's own rule; the queue checks its
    /// connection string itself.</summary>
    /// <param name="minConnectTimeout">The shortest connect timeout the client takes.</param>
    /// <param name="queueName">The names the server takes.</param>
    /// <param name="queueNameRule">The same rule for people, for example <c>1 to 100 characters, letters, digits, '_', '-' or '.'.</c></param>
    /// <exception cref="ArgumentException">The name does not match, the owner is empty, or a duration is out of its range (the
    /// message names both).</exception>
    public void Validate(TimeSpan minConnectTimeout, Regex queueName, string queueNameRule)
    {
        ArgumentNullException.ThrowIfNull(queueName);
        if (QueueName is null || !queueName.IsMatch(QueueName))
        {
            throw new ArgumentException($"QueueName '{QueueName}' is not valid: {queueNameRule}");
        }

        if (string.IsNullOrWhiteSpace(Owner))
        {
            throw new ArgumentException("Owner must not be empty.");
        }

        RequireRange(ConnectTimeout, minConnectTimeout, TimeSpan.FromSeconds(1024), nameof(ConnectTimeout));
        RequireRange(ReconnectTimeout, TimeSpan.Zero, TimeSpan.FromDays(1), nameof(ReconnectTimeout));
        RequireRange(ReconnectInitialDelay, TimeSpan.FromMilliseconds(1), TimeSpan.FromMinutes(10), nameof(ReconnectInitialDelay));
        RequireRange(ReconnectMaxDelay, ReconnectInitialDelay, TimeSpan.FromMinutes(10), nameof(ReconnectMaxDelay));
    }

    /// <summary>
    /// Parses a client's connection string with <paramref name="parse"/>. The messages name the server's kind and what the client
    /// says is wrong, never the string itself (it may hold a password).
    /// </summary>
    /// <param name="connectionString">The connection string.</param>
    /// <param name="server">The server's kind, for example <c>Redis</c>.</param>
    /// <param name="example">A well-formed string, for the message about an empty one.</param>
    /// <param name="parse">The client's parser.</param>
    /// <exception cref="ArgumentException">The string is empty, or the client refused it.</exception>
    public static T ParseConnectionString<T>(string? connectionString, string server, string example, Func<string, T> parse)
    {
        ArgumentNullException.ThrowIfNull(parse);
        if (string.IsNullOrWhiteSpace(connectionString))
        {
            throw new ArgumentException($"The {server} connection string is empty; expected for example '{example}'.", nameof(connectionString));
        }

        try
        {
            return parse(connectionString);
        }
        catch (Exception e) when (e is ArgumentException or FormatException or InvalidCastException or OverflowException)
        {
            // The client's message names the keyword: its first line, without the parameter name a client's ArgumentException adds.
            string why = e.Message.Split('\n', 2)[0].Split(" (Parameter", 2)[0].Trim();
            throw new ArgumentException($"The {server} connection string is malformed: {why}", nameof(connectionString), e);
        }
    }

    /// <summary>Checks a lease's length as every queue takes it: 1 ms to 1 day.</summary>
    /// <exception cref="ArgumentOutOfRangeException">It is out of that range (the message names <c>leaseDuration</c>).</exception>
    public static void RequireLeaseDuration(TimeSpan leaseDuration) =>
        RequireRange(leaseDuration, TimeSpan.FromMilliseconds(1), TimeSpan.FromDays(1), nameof(leaseDuration));

    /// <summary>Checks an enqueue's payloads before anything is sent: the list and every payload in it must be there.</summary>
    /// <returns>The payloads, as an array.</returns>
    /// <exception cref="ArgumentException">A payload is null (the message names the first).</exception>
    public static string[] RequirePayloads(IReadOnlyList<string> payloads)
    {
        ArgumentNullException.ThrowIfNull(payloads);
        string[] array = new string[payloads.Count];
        for (int i = 0; i < array.Length; i++)
        {
            array[i] = payloads[i] ?? throw new ArgumentException($"payloads[{i}] is null; a payload must not be null.", nameof(payloads));
        }

        return array;
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
