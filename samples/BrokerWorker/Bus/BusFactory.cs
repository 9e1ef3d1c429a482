using System;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using MessageBus;
using Npgsql;

namespace BrokerWorker.Bus;

/// <summary>The real brokers: which there are, the connection string (checked before anything connects), one-line failures.</summary>
public static class BusFactory
{
    /// <summary>Every real broker, in the order <c>--help</c> lists them. A new broker is a <see cref="Broker"/> and a line here.</summary>
    public static readonly BrokerKind[] Kinds = [PostgresBroker.Kind, RedisBroker.Kind, RabbitMqBroker.Kind];

    /// <summary>The kind <c>--bus</c> names; null for the in-memory bus.</summary>
    public static BrokerKind? Kind(string bus) => Kinds.FirstOrDefault(k => k.Bus == bus);

    /// <summary>The connection string from <c>--connection</c> or the bus's environment variable; null with a one-line reason when
    /// missing or malformed.</summary>
    public static string? ConnectionString(Options options, out string? error)
    {
        BrokerKind kind = Kind(options.Bus) ?? throw new InvalidOperationException("The in-memory bus has no connection string.");
        string? value = options.Connection ?? Environment.GetEnvironmentVariable(kind.Variable);
        error = string.IsNullOrWhiteSpace(value) ? $"--bus {options.Bus} needs a connection string: --connection or the {kind.Variable} environment variable." : null;
        try
        {
            if (error is null)
            {
                kind.Validate(value!); // parses only; never connects, never repeats the string
            }
        }
        catch (ArgumentException e)
        {
            error = e.Message.Split(" (Parameter", 2)[0];
        }

        return error is null ? value : null;
    }

    /// <summary>A queue object on the bus of <paramref name="options"/>; <paramref name="role"/> names its connections and its leases' owner.</summary>
    public static Broker Create(string connectionString, Options options, string queue, string role) =>
        Kind(options.Bus)!.Create(connectionString, options, queue, role);

    /// <summary>Runs <paramref name="step"/>, which uses <paramref name="broker"/> to <paramref name="doing"/> (for example "set up the
    /// queue x"); false after writing one line on <paramref name="error"/> when the broker fails it.</summary>
    public static async Task<bool> TryAsync(Func<Task> step, Broker broker, string doing, TextWriter error)
    {
        try
        {
            await step();
            return true;
        }
        catch (Exception e) when (IsBrokerFailure(e))
        {
            // A connection failure as the queue words it (host, port; PostgreSQL: database, user); a refused statement or script as
            // what was being done, where, and the server's reason. Never the password, never the server's detail lines.
            await error.WriteLineAsync($"BrokerWorker: {(e is QueueConnectionException ? e.Message : $"{broker.Where}, could not {doing}: {Reason(e)}")}");
            return false;
        }
    }

    /// <summary>Whether <paramref name="e"/> is a broker failing the sample: no connection, or a statement or script it refused.</summary>
    public static bool IsBrokerFailure(Exception e) => e is QueueConnectionException || Kinds.Any(k => k.IsFailure(e));

    /// <summary>The broker's reason in one line: PostgreSQL's message and SQLSTATE, or the first line of the client's message.</summary>
    public static string Reason(Exception e) => e is PostgresException p
        ? $"{p.MessageText} (SQLSTATE {p.SqlState})"
        : e.Message.Split('\n', 2)[0].TrimEnd();

    /// <summary>The queue of one mode's run: the prefix and the mode (a PostgreSQL table, a Redis key prefix, a RabbitMQ queue).</summary>
    public static string Table(Options options, string mode) => $"{options.Queue}_{mode.Replace('-', '_')}";
}
