using System;
using System.Data.Common;
using System.IO;
using System.Threading.Tasks;
using MessageBus.Postgres;
using MessageBus.Redis;
using Npgsql;
using StackExchange.Redis;

namespace BrokerWorker.Bus;

/// <summary>The real brokers' side: the connection string (checked before anything connects) and the queue objects of a run.</summary>
public static class BusFactory
{
    /// <summary>
    /// The connection string from <c>--connection</c> or the bus's environment variable, its connect timeout replaced by
    /// <c>--connect-timeout</c>; null with a one-line reason when missing or malformed.
    /// </summary>
    public static string? ConnectionString(Options options, out string? error)
    {
        string variable = options.ConnectionVariable ?? throw new InvalidOperationException("The in-memory bus has no connection string.");
        string? value = options.Connection ?? Environment.GetEnvironmentVariable(variable);
        if (string.IsNullOrWhiteSpace(value))
        {
            error = $"--bus {options.Bus} needs a connection string: --connection or the {variable} environment variable.";
            return null;
        }

        try
        {
            // Parses only; never connects, never repeats the string.
            if (options.Bus == "redis")
            {
                RedisLeaseQueue.ValidateConnectionString(value);
            }
            else
            {
                PostgresLeaseQueue.ValidateConnectionString(value);
            }
        }
        catch (ArgumentException e)
        {
            error = e.Message.Split(" (Parameter", 2)[0];
            return null;
        }

        error = null;
        return WithConnectTimeout(value, options);
    }

    // --connect-timeout replaces the string's own, so that every connection of the run waits as long: the queue's, the report's.
    private static string WithConnectTimeout(string value, Options options)
    {
        if (options.Bus == "redis")
        {
            ConfigurationOptions redis = ConfigurationOptions.Parse(value);
            redis.ConnectTimeout = (int)options.ConnectTimeout.TotalMilliseconds;
            return redis.ToString(includePassword: true);
        }

        return new NpgsqlConnectionStringBuilder(value) { Timeout = (int)Math.Ceiling(options.ConnectTimeout.TotalSeconds) }.ConnectionString;
    }

    /// <summary>A queue object on the bus of <paramref name="options"/>; <paramref name="role"/> names its connections and its leases' owner.</summary>
    public static Broker Create(string connectionString, Options options, string queue, string role) => options.Bus == "redis"
        ? RedisBroker.Create(connectionString, options, queue, role)
        : PostgresBroker.Create(connectionString, options, queue, role);

    /// <summary>
    /// Runs <paramref name="step"/>, which uses the broker to <paramref name="doing"/> (for example "set up the queue x"); false
    /// after writing one line on <paramref name="error"/> when the broker fails it (<see cref="Describe"/>).
    /// </summary>
    public static async Task<bool> TryAsync(Func<Task> step, string connectionString, string doing, TextWriter error)
    {
        try
        {
            await step();
            return true;
        }
        catch (Exception e) when (IsBrokerFailure(e))
        {
            await error.WriteLineAsync($"BrokerWorker: {Describe(e, connectionString, doing)}");
            return false;
        }
    }

    /// <summary>Whether <paramref name="e"/> is a broker failing the sample: no connection, or a statement or script it refused.</summary>
    public static bool IsBrokerFailure(Exception e) => e is PostgresConnectionException or DbException or RedisQueueConnectionException or RedisException;

    /// <summary>
    /// One line for a broker failure: a connection failure as the queue words it (host, port; PostgreSQL: database, user); a
    /// refused statement or script as what was being done, where, and the server's reason. Never the password, never the
    /// server's detail lines.
    /// </summary>
    public static string Describe(Exception e, string connectionString, string doing)
    {
        if (e is PostgresConnectionException or RedisQueueConnectionException)
        {
            return e.Message;
        }

        if (e is RedisException)
        {
            ConfigurationOptions redis = ConfigurationOptions.Parse(connectionString);
            return $"Redis at {redis.EndPoints[0]}, could not {doing}: {Reason(e)}";
        }

        var builder = new NpgsqlConnectionStringBuilder(connectionString);
        return $"PostgreSQL at {builder.Host}:{builder.Port}, database '{builder.Database ?? builder.Username}'" +
            (builder.Username is null ? "" : $", user '{builder.Username}'") + $", could not {doing}: {Reason(e)}";
    }

    /// <summary>The broker's reason in one line: PostgreSQL's message and SQLSTATE, or the first line of the client's message.</summary>
    public static string Reason(Exception e) => e is PostgresException p
        ? $"{p.MessageText} (SQLSTATE {p.SqlState})"
        : e.Message.Split('\n', 2)[0].TrimEnd();

    /// <summary>The queue of one mode's run: the prefix and the mode (a PostgreSQL table, a Redis key prefix).</summary>
    public static string Table(Options options, string mode) => $"{options.Queue}_{mode.Replace('-', '_')}";
}
