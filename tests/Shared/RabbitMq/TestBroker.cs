using System.Diagnostics;
using System.IO;
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

    /// <summary>Runs <c>rabbitmqctl</c> of the throwaway node (for example <c>close_all_connections</c>) and returns its output.</summary>
    public static async Task<string> CtlAsync(params string[] arguments)
    {
        var info = new ProcessStartInfo(Path.Combine(DataDirectory, "rabbitmqctl")) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        using Process ctl = Process.Start(info)!;
        Task<string> output = ctl.StandardOutput.ReadToEndAsync();
        Task<string> error = ctl.StandardError.ReadToEndAsync();
        await ctl.WaitForExitAsync().WaitAsync(Patience);
        if (ctl.ExitCode != 0)
        {
            throw new InvalidOperationException($"rabbitmqctl {string.Join(' ', arguments)} exited {ctl.ExitCode}: {await error} {await output}");
        }

        return await output;
    }

    /// <summary>
    /// Kills the node with SIGKILL (no shutdown) and starts it again exactly as tests/rabbitmq/start.sh did (its node.sh), then waits
    /// until it accepts AMQP connections: what survives is what the node had written (durable queues, persistent messages it confirmed).
    /// </summary>
    public static async Task CrashAndRestartAsync()
    {
        string pidFile = Path.Combine(DataDirectory, "rabbitmq.pid");
        int pid = int.Parse(File.ReadAllText(pidFile).Trim(), System.Globalization.CultureInfo.InvariantCulture);
        using (Process node = Process.GetProcessById(pid))
        {
            node.Kill();
            await node.WaitForExitAsync().WaitAsync(Patience);
        }

        File.Delete(pidFile);
        using (Process start = Process.Start(new ProcessStartInfo(Path.Combine(DataDirectory, "node.sh")))!)
        {
            await start.WaitForExitAsync().WaitAsync(Patience);
        }

        using var timeout = new CancellationTokenSource(Patience);
        while (!File.Exists(pidFile) || !await AcceptsAsync())
        {
            await Task.Delay(100, timeout.Token);
        }
    }

    private static string DataDirectory => Environment.GetEnvironmentVariable(DataVariable) is { Length: > 0 } dir
        ? dir
        : throw new InvalidOperationException($"{DataVariable} is not set: only a node started by tests/rabbitmq/start.sh is broken by the tests.");

    private static async Task<bool> AcceptsAsync()
    {
        try
        {
            using TcpClient client = new();
            await client.ConnectAsync(Uri.Host, Uri.Port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
