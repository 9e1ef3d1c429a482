using System.Diagnostics;
using System.IO;
using System.Net.Sockets;
using StackExchange.Redis;

namespace MessageBus.Redis.Tests;

/// <summary>The Redis server of the tests, from the environment, and a fresh queue per test.</summary>
internal static class TestServer
{
    public const string Variable = "PRIORITYASYNC_REDIS";

    public const string DataVariable = "PRIORITYASYNC_REDIS_DATA";

    /// <summary>Every wait on the server is bounded by this, and fails loudly when it runs out.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    public static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>Why no server can be used, or null when one answers on its port.</summary>
    public static string? Unavailable()
    {
        string? connectionString = Environment.GetEnvironmentVariable(Variable);
        if (string.IsNullOrWhiteSpace(connectionString))
        {
            return $"{Variable} is not set.";
        }

        (string host, int port) = HostAndPort;
        try
        {
            using TcpClient client = new();
            if (!client.ConnectAsync(host, port).Wait(TimeSpan.FromSeconds(2)))
            {
                return $"No Redis answers at {host}:{port} ({Variable}).";
            }
        }
        catch (Exception e)
        {
            return $"No Redis answers at {host}:{port} ({Variable}): {e.GetBaseException().Message}";
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
                    $"{Variable} is not set{(IsCi ? " and CI=true: CI must start Redis (tests/redis/start.sh) before the tests" : "")}.");
            }

            return value;
        }
    }

    public static (string Host, int Port) HostAndPort
    {
        get
        {
            ConfigurationOptions options = ConfigurationOptions.Parse(ConnectionString);
            return options.EndPoints[0] switch
            {
                System.Net.DnsEndPoint d => (d.Host, d.Port),
                System.Net.IPEndPoint i => (i.Address.ToString(), i.Port),
                var e => throw new InvalidOperationException($"Unexpected endpoint {e}"),
            };
        }
    }

    /// <summary>Options for a new, uniquely named queue; no periodic stalled check unless asked (the tests call it when they mean to).</summary>
    public static RedisLeaseQueueOptions NewOptions(string? queueName = null, string owner = "test", TimeSpan? stalledCheckInterval = null) => new()
    {
        ConnectionString = ConnectionString,
        QueueName = queueName ?? "t_" + Guid.NewGuid().ToString("N")[..20],
        Owner = owner,
        ReconnectTimeout = TimeSpan.FromSeconds(30),
        StalledCheckInterval = stalledCheckInterval,
    };

    public static async Task<RedisLeaseQueue> CreateQueueAsync(RedisLeaseQueueOptions options)
    {
        RedisLeaseQueue queue = new(options);
        await queue.ConnectAsync();
        return queue;
    }

    /// <summary>A connection of the test's own, for commands the queue does not send (CLIENT KILL, TIME, reading keys).</summary>
    public static async Task<ConnectionMultiplexer> ConnectAdminAsync()
    {
        ConfigurationOptions options = ConfigurationOptions.Parse(ConnectionString);
        options.ClientName = "messagebus-tests-admin";
        options.AllowAdmin = true;
        return await ConnectionMultiplexer.ConnectAsync(options);
    }

    /// <summary>The server's clock, in Unix milliseconds.</summary>
    public static async Task<long> ServerNowAsync(IDatabase db)
    {
        RedisResult[] time = (RedisResult[])(await db.ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1000) + ((long)time[1] / 1000);
    }

    /// <summary>Waits until the server's clock is past <paramref name="instant"/>: expiry is the server's decision, not ours.</summary>
    public static async Task WaitForServerClockPastAsync(DateTimeOffset instant)
    {
        await using ConnectionMultiplexer admin = await ConnectAdminAsync();
        using CancellationTokenSource timeout = new(Patience);
        while (await ServerNowAsync(admin.GetDatabase()) <= instant.ToUnixTimeMilliseconds())
        {
            await Task.Delay(10, timeout.Token);
        }
    }

    /// <summary>
    /// Kills the server with SIGKILL (no shutdown, no last write) and starts it again from its configuration, as tests/redis/start.sh
    /// left it: what survives is what the append-only file, synced on every write, holds.
    /// </summary>
    public static async Task CrashAndRestartServerAsync()
    {
        string dir = Environment.GetEnvironmentVariable(DataVariable)
            ?? throw new InvalidOperationException($"{DataVariable} is not set and CI=true: CI starts the server with tests/redis/start.sh.");
        int pid = int.Parse(File.ReadAllText(Path.Combine(dir, "redis.pid")).Trim(), System.Globalization.CultureInfo.InvariantCulture);
        using (Process server = Process.GetProcessById(pid))
        {
            server.Kill();
            await server.WaitForExitAsync().WaitAsync(Patience);
        }

        File.Delete(Path.Combine(dir, "redis.pid"));
        var info = new ProcessStartInfo("redis-server") { RedirectStandardOutput = true, RedirectStandardError = true };
        info.ArgumentList.Add(Path.Combine(dir, "redis.conf"));
        using Process start = Process.Start(info)!;
        Task<string> output = start.StandardOutput.ReadToEndAsync();
        Task<string> error = start.StandardError.ReadToEndAsync();
        await start.WaitForExitAsync().WaitAsync(Patience);
        start.ExitCode.Should().Be(0, $"redis-server (daemonized) starts: {await output} {await error}");
    }
}
