using System.Net.Sockets;

namespace TestSupport.RabbitMq;

/// <summary>
/// The RabbitMQ node of the tests, from the environment (<c>eval "$(tests/rabbitmq/start.sh)"</c>), and the CLI of the throwaway
/// node for the tests that break it. Shared by every RabbitMQ test project.
/// </summary>
internal static class TestBroker
{
    public const string Variable = "PRIORITYASYNC_RABBITMQ";

    public const string DataVariable = "PRIORITYASYNC_RABBITMQ_DATA";

    public const string HowToStart =
        "Start one for this shell, then run the tests again: eval \"$(tests/rabbitmq/start.sh)\" (tests/rabbitmq/stop.sh removes it). " +
        "With CI=true these tests fail instead.";

    /// <summary>Every wait on the broker is bounded by this, and fails loudly when it runs out.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>Why no node can be used, or null when one accepts connections on its port.</summary>
    public static string? Unavailable()
    {
        string? value = Environment.GetEnvironmentVariable(Variable);
        if (string.IsNullOrWhiteSpace(value))
        {
            return $"{Variable} is not set.";
        }

        if (!Uri.TryCreate(value, UriKind.Absolute, out Uri? uri) || uri.Scheme != "amqp")
        {
            return $"{Variable} is not an amqp:// URI.";
        }

        try
        {
            using TcpClient client = new();
            if (!client.ConnectAsync(uri.Host, uri.Port).Wait(TimeSpan.FromSeconds(2)))
            {
                return $"No RabbitMQ answers at {uri.Host}:{uri.Port} ({Variable}).";
            }
        }
        catch (Exception e)
        {
            return $"No RabbitMQ answers at {uri.Host}:{uri.Port} ({Variable}): {e.GetBaseException().Message}";
        }

        return null;
    }

    /// <summary>The node's AMQP URI, with its user and password.</summary>
    public static Uri Uri
    {
        get
        {
            string? value = Environment.GetEnvironmentVariable(Variable);
            if (string.IsNullOrWhiteSpace(value))
            {
                throw new InvalidOperationException(
                    $"{Variable} is not set{(IsCi ? " and CI=true: CI must start RabbitMQ (tests/rabbitmq/start.sh) before the tests" : "")}.");
            }

            return new Uri(value);
        }
    }

    /// <summary>A queue name no other test uses.</summary>
    public static string NewQueueName(string prefix = "t") => $"{prefix}-{Guid.NewGuid():N}"[..Math.Min(prefix.Length + 21, 64)];
}
