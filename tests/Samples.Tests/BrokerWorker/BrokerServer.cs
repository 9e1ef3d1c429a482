using System.Net.Sockets;

namespace Samples.Tests.BrokerWorker;

/// <summary>
/// The real brokers of the BrokerWorker commands, from the environment (<c>PRIORITYASYNC_POSTGRES</c>, <c>PRIORITYASYNC_REDIS</c>,
/// <c>PRIORITYASYNC_RABBITMQ</c>, as tests/postgres/start.sh, tests/redis/start.sh and tests/rabbitmq/start.sh print them).
/// </summary>
internal static class BrokerServer
{
    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    public static string Variable(string bus) => $"PRIORITYASYNC_{bus.ToUpperInvariant()}";

    public static string Name(string bus) => bus switch { "redis" => "Redis", "rabbitmq" => "RabbitMQ", _ => "PostgreSQL" };

    /// <summary>Why no server of <paramref name="bus"/> can be used, or null when one answers on its port.</summary>
    public static string? Unavailable(string bus)
    {
        string variable = Variable(bus);
        string? connection = Environment.GetEnvironmentVariable(variable);
        if (string.IsNullOrWhiteSpace(connection))
        {
            return $"{variable} is not set.";
        }

        (string host, int port) = bus switch
        {
            "redis" => RedisEndpoint(connection),
            "rabbitmq" when Uri.TryCreate(connection, UriKind.Absolute, out Uri? uri) => (uri.Host, uri.Port),
            "rabbitmq" => ("", 0),
            _ => PostgresEndpoint(connection),
        };
        try
        {
            using TcpClient client = new();
            if (!client.ConnectAsync(host, port).Wait(TimeSpan.FromSeconds(2)))
            {
                return $"nothing answers at {host}:{port} ({variable}).";
            }
        }
        catch (Exception e)
        {
            return $"nothing answers at {host}:{port} ({variable}): {e.GetBaseException().Message}";
        }

        return null;
    }

    private static (string, int) RedisEndpoint(string connection)
    {
        string[] hostPort = connection.Split(',')[0].Split(':');
        return (hostPort[0], hostPort.Length > 1 ? int.Parse(hostPort[1], System.Globalization.CultureInfo.InvariantCulture) : 6379);
    }

    private static (string, int) PostgresEndpoint(string connection)
    {
        Dictionary<string, string> pairs = connection.Split(';', StringSplitOptions.RemoveEmptyEntries).Select(p => p.Split('=', 2))
            .Where(p => p.Length == 2).ToDictionary(p => p[0].Trim().ToLowerInvariant(), p => p[1].Trim());
        return (pairs.GetValueOrDefault("host", "localhost"), int.Parse(pairs.GetValueOrDefault("port", "5432"), System.Globalization.CultureInfo.InvariantCulture));
    }
}

/// <summary>
/// A theory whose rows need a real broker (<c>postgres</c>, <c>redis</c> or <c>rabbitmq</c>). Without one it is skipped with the
/// reason and the way to start one, except with <c>CI=true</c>: there a missing server fails it (CI starts them all).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class BrokerTheoryAttribute : TheoryAttribute
{
    public BrokerTheoryAttribute(string bus)
    {
        if (!BrokerServer.IsCi && BrokerServer.Unavailable(bus) is { } reason)
        {
            string name = BrokerServer.Name(bus);
            Skip = SkipReport.Record(
                $"(no {name}: {reason}) The README commands on {name} need a server: eval \"$(tests/{bus}/start.sh)\" starts one for this shell " +
                $"(tests/{bus}/stop.sh removes it). With CI=true these tests fail instead.");
        }
    }
}
