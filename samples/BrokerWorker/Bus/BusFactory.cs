using System;
using System.Data.Common;
using System.IO;
using System.Threading.Tasks;
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

    /// <summary>
    /// Runs <paramref name="step"/>, which uses the database to <paramref name="doing"/> (for example "create the queue table x");
    /// false after writing one line on <paramref name="error"/> when the database fails it (<see cref="Describe"/>).
    /// </summary>
    public static async Task<bool> TryAsync(Func<Task> step, string connectionString, string doing, TextWriter error)
    {
        try
        {
            await step();
            return true;
        }
        catch (Exception e) when (IsDatabaseFailure(e))
        {
            await error.WriteLineAsync($"BrokerWorker: {Describe(e, connectionString, doing)}");
            return false;
        }
    }

    /// <summary>Whether <paramref name="e"/> is the database failing the sample: no connection, or a statement it refused.</summary>
    public static bool IsDatabaseFailure(Exception e) => e is PostgresConnectionException or DbException;

    /// <summary>
    /// One line for a database failure: a connection failure as the queue words it (host, port, database, user); a refused statement
    /// as what was being done, where, and the server's reason with its SQLSTATE. Never the password, never the server's detail lines.
    /// </summary>
    public static string Describe(Exception e, string connectionString, string doing)
    {
        if (e is PostgresConnectionException)
        {
            return e.Message;
        }

        var builder = new NpgsqlConnectionStringBuilder(connectionString);
        return $"PostgreSQL at {builder.Host}:{builder.Port}, database '{builder.Database ?? builder.Username}'" +
            (builder.Username is null ? "" : $", user '{builder.Username}'") + $", could not {doing}: {Reason(e)}";
    }

    /// <summary>The database's reason in one line: the server's message and SQLSTATE, or the first line of the client's message.</summary>
    public static string Reason(Exception e) => e is PostgresException p
        ? $"{p.MessageText} (SQLSTATE {p.SqlState})"
        : e.Message.Split('\n', 2)[0].TrimEnd();

    /// <summary>The table of one mode's run: the prefix and the mode.</summary>
    public static string Table(Options options, string mode) => $"{options.Queue}_{mode.Replace('-', '_')}";
}
