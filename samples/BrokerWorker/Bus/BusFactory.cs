using System;
using MessageBus.Postgres;
using Npgsql;

namespace BrokerWorker.Bus;

/// <summary>The PostgreSQL side: the connection string (checked before anything connects) and the queue objects of a run.</summary>
public static class BusFactory
{
    /// <summary>The connection string from <c>--connection</c> or the environment; null with a one-line reason when missing or malformed.</summary>
    public static string? ConnectionString(Options options, out string? error)
    {
        string? value = options.Connection ?? Environment.GetEnvironmentVariable(Options.ConnectionVariable);
        if (string.IsNullOrWhiteSpace(value))
        {
            error = $"--bus postgres needs a connection string: --connection or the {Options.ConnectionVariable} environment variable.";
            return null;
        }

        try
        {
            PostgresLeaseQueue.ValidateConnectionString(value); // parses only; never connects, never repeats the string
        }
        catch (ArgumentException e)
        {
            error = e.Message.Split(" (Parameter", 2)[0];
            return null;
        }

        error = null;
        return value;
    }

    /// <summary>A queue object; <paramref name="role"/> names its connections (application_name) and its leases' owner.</summary>
    public static PostgresLeaseQueue Queue(string connectionString, Options options, string table, string role) =>
        new(new PostgresLeaseQueueOptions
        {
            ConnectionString = new NpgsqlConnectionStringBuilder(connectionString) { ApplicationName = $"broker-worker-{role}" }.ConnectionString,
            QueueName = table,
            Owner = $"{role}:{Environment.ProcessId}",
            ConnectTimeout = options.ConnectTimeout,
        });

    /// <summary>The table of one mode's run: the prefix and the mode.</summary>
    public static string Table(Options options, string mode) => $"{options.Queue}_{mode.Replace('-', '_')}";
}
