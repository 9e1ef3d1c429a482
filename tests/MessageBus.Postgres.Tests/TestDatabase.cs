using System.Net.Sockets;
using Npgsql;

namespace MessageBus.Postgres.Tests;

/// <summary>The PostgreSQL server of the tests, from the environment, and a fresh queue table per test.</summary>
internal static class TestDatabase
{
    public const string Variable = "PRIORITYASYNC_POSTGRES";

    /// <summary>Every wait on the database is bounded by this, and fails loudly when it runs out.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    /// <summary>
    /// The connect timeout of every connection a test opens or starts a worker process with: a fresh process on a busy machine
    /// (CI runs the suite beside CPU-bound processes) can take more than the default 5 s to connect.
    /// </summary>
    public static readonly TimeSpan ConnectTimeout = Patience;


    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>Why no server can be used, or null when one answers on its port.</summary>
    public static string? Unavailable()
    {
        string? connectionString = Environment.GetEnvironmentVariable(Variable);
        if (string.IsNullOrWhiteSpace(connectionString))
        {
            return $"{Variable} is not set.";
        }

        NpgsqlConnectionStringBuilder builder = new(connectionString);
        try
        {
            using TcpClient client = new();
            if (!client.ConnectAsync(builder.Host!, builder.Port).Wait(TimeSpan.FromSeconds(2)))
            {
                return $"No PostgreSQL answers at {builder.Host}:{builder.Port} ({Variable}).";
            }
        }
        catch (Exception e)
        {
            return $"No PostgreSQL answers at {builder.Host}:{builder.Port} ({Variable}): {e.GetBaseException().Message}";
        }

        return null;
    }

    public static string ConnectionString
    {
        get
        {
            string? value = Environment.GetEnvironmentVariable(Variable);
            if (string.IsNullOrWhiteSpace(value))
            {
                throw new InvalidOperationException(
                    $"{Variable} is not set{(IsCi ? " and CI=true: CI must start PostgreSQL (tests/postgres/start.sh) before the tests" : "")}.");
            }

            return value;
        }
    }

    /// <summary>The connection string of the BrokerWorker's worker processes: the server's, with <see cref="ConnectTimeout"/>.</summary>
    public static string WorkerConnectionString => new NpgsqlConnectionStringBuilder(ConnectionString) { Timeout = (int)ConnectTimeout.TotalSeconds }.ConnectionString;

    /// <summary>Options for a new, uniquely named queue; connections tagged with an application name the test can target.</summary>
    public static PostgresLeaseQueueOptions NewOptions(string? queueName = null, string owner = "test", string? applicationName = null)
    {
        NpgsqlConnectionStringBuilder builder = new(ConnectionString) { ApplicationName = applicationName ?? "messagebus-tests" };
        return new PostgresLeaseQueueOptions
        {
            ConnectionString = builder.ConnectionString,
            QueueName = queueName ?? "t_" + Guid.NewGuid().ToString("N")[..20],
            Owner = owner,
            ReconnectTimeout = TimeSpan.FromSeconds(30),
            ConnectTimeout = ConnectTimeout,
        };
    }

    public static async Task<PostgresLeaseQueue> CreateQueueAsync(PostgresLeaseQueueOptions options)
    {
        PostgresLeaseQueue queue = new(options);
        await queue.EnsureSchemaAsync();
        return queue;
    }

    /// <summary>A plain connection for the tests' own statements (locks, the clock, pg_terminate_backend).</summary>
    public static async Task<NpgsqlConnection> OpenAdminAsync()
    {
        NpgsqlConnectionStringBuilder builder = new(ConnectionString) { ApplicationName = "messagebus-tests-admin", Pooling = false, Timeout = (int)ConnectTimeout.TotalSeconds };
        NpgsqlConnection connection = new(builder.ConnectionString);
        await connection.OpenAsync();
        return connection;
    }

    /// <summary>Waits until the database's clock is past <paramref name="instant"/>: expiry is the database's decision, not ours.</summary>
    public static async Task WaitForDatabaseClockPastAsync(DateTimeOffset instant)
    {
        await using NpgsqlConnection connection = await OpenAdminAsync();
        using CancellationTokenSource timeout = new(Patience);
        while (true)
        {
            await using NpgsqlCommand command = new("SELECT clock_timestamp() > @instant", connection);
            command.Parameters.AddWithValue("instant", instant);
            if ((bool)(await command.ExecuteScalarAsync(timeout.Token))!)
            {
                return;
            }

            await Task.Delay(20, timeout.Token);
        }
    }
}
