using System;
using System.Collections.Generic;
using System.Globalization;
using System.Threading.Tasks;
using MessageBus;
using MessageBus.Redis;
using StackExchange.Redis;

namespace BrokerWorker.Bus;

/// <summary>The Redis lease queue as a <see cref="Broker"/>.</summary>
public sealed class RedisBroker(RedisLeaseQueue queue, string connectionString) : Broker
{
    private readonly RedisMessageBus _bus = new(queue);

    public RedisLeaseQueue LeaseQueue => queue;

    public override string Name => "Redis";

    public override string Queue => queue.QueueName;

    public override IMessageBus Bus => _bus;

    public override long Reconnects => queue.Reconnects;

    public override async Task SetUpAsync(bool purge)
    {
        await queue.ConnectAsync();
        if (purge)
        {
            await queue.PurgeAsync();
        }
        else
        {
            await queue.GetCountsAsync(); // the scripts loaded, before the clock starts
        }
    }

    public override Task EnqueueAsync(IReadOnlyList<string> payloads) => queue.EnqueueAsync(payloads);

    public override async Task<long> ExpiredRedeliveriesAsync() => (await queue.GetCountsAsync()).ExpiredRedeliveries;

    /// <summary>The server's own CPU time (INFO cpu: used_cpu_user + used_cpu_sys, every thread of the server).</summary>
    public override async Task<TimeSpan?> ServerCpuAsync()
    {
        ConfigurationOptions configuration = ConfigurationOptions.Parse(connectionString);
        configuration.AllowAdmin = true; // INFO is an admin command to StackExchange.Redis
        string info;
        try
        {
            await using ConnectionMultiplexer connection = await ConnectionMultiplexer.ConnectAsync(configuration);
            info = (string)(await connection.GetDatabase().ExecuteAsync("INFO", "cpu"))!;
        }
        catch (RedisException)
        {
            return null; // a figure for the report, never a reason to fail the run (the server may be restarting)
        }

        double seconds = 0;
        foreach (string line in info.Split('\n'))
        {
            string[] pair = line.Trim().Split(':');
            if (pair.Length == 2 && pair[0] is "used_cpu_user" or "used_cpu_sys")
            {
                seconds += double.Parse(pair[1], CultureInfo.InvariantCulture);
            }
        }

        return TimeSpan.FromSeconds(seconds);
    }

    public override Task DropAsync() => queue.DropAsync();

    public override ValueTask DisposeAsync() => queue.DisposeAsync();

    /// <summary>
    /// A queue object; <paramref name="role"/> names its connection (CLIENT LIST) and its leases' owner. Its stalled check runs
    /// every half lease, so that a lease that lapsed is back in the queue within half a lease of its expiry.
    /// </summary>
    public static RedisBroker Create(string connectionString, Options options, string queueName, string role)
    {
        TimeSpan interval = options.Scaled(options.Lease) / 2;
        return new RedisBroker(
            new RedisLeaseQueue(new RedisLeaseQueueOptions
            {
                ConnectionString = connectionString,
                QueueName = queueName,
                Owner = $"{role}:{Environment.ProcessId}",
                ClientName = $"broker-worker-{role}",
                ConnectTimeout = options.ConnectTimeout,
                StalledCheckInterval = interval > TimeSpan.FromMilliseconds(10) ? interval : TimeSpan.FromMilliseconds(10),
            }),
            connectionString);
    }
}
