using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using MessageBus.Redis;
using MessageBus.Redis.Internal;
using StackExchange.Redis;

namespace BrokerWorker.Bus;

/// <summary>The Redis lease queue as a <see cref="Broker"/> (<c>--bus redis</c>).</summary>
public sealed class RedisBroker : Broker
{
    public static readonly BrokerKind Kind = new(
        "redis", "Redis", "PRIORITYASYNC_REDIS", RedisLeaseQueue.ValidateConnectionString, e => e is RedisException, Create);

    private readonly RedisLeaseQueue _queue;
    private readonly string _connectionString;

    private RedisBroker(RedisLeaseQueue queue, string connectionString)
        : base(queue, $"Redis at {queue.Endpoint}")
    {
        _queue = queue;
        _connectionString = connectionString;
    }

    public override long Reconnects => _queue.Reconnects;

    public override string PlainLoop => "plain StackExchange.Redis loop (same scripts, one connection)";

    public override async Task SetUpAsync(bool purge)
    {
        await _queue.ConnectAsync();
        await (purge ? _queue.PurgeAsync() : _queue.GetCountsAsync()); // or the scripts loaded, before the clock starts
    }

    public override Task EnqueueAsync(IReadOnlyList<string> payloads) => _queue.EnqueueAsync(payloads);

    /// <summary>The queue's own scripts on one connection with nothing around them: what the bus's retries, lease objects and
    /// renewal batching cost on top.</summary>
    public override async Task<(long Cycles, TimeSpan Elapsed)> PlainCyclesAsync(TimeSpan lease, TimeSpan duration)
    {
        (RedisKey[] receiveKeys, RedisKey[] renewKeys, RedisKey[] completeKeys, RedisValue prefix, RedisValue owner) = _queue.ScriptKeys;
        await using ConnectionMultiplexer connection = await ConnectionMultiplexer.ConnectAsync(_connectionString);
        IDatabase db = connection.GetDatabase();
        long ms = (long)lease.TotalMilliseconds;
        long cycles = 0;
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            RedisResult received = await db.ScriptEvaluateAsync(QueueScripts.Receive, receiveKeys, [prefix, ms, owner]);
            if (received.IsNull)
            {
                throw new InvalidOperationException("The queue ran dry during the measurement.");
            }

            var fields = (RedisResult[])received!;
            (long id, long token) = ((long)fields[0], (long)fields[2]);
            var renewed = (long[])(await db.ScriptEvaluateAsync(QueueScripts.Renew, renewKeys, [prefix, ms, id, token]))!;
            if (renewed[1] != 1 || (int)await db.ScriptEvaluateAsync(QueueScripts.Complete, completeKeys, [prefix, id, token]) != 1)
            {
                throw new InvalidOperationException($"A fresh lease was refused: message {id}.");
            }

            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }

    public override async Task<string> DurabilityAsync()
    {
        await using ConnectionMultiplexer connection = await AdminAsync();
        KeyValuePair<string, string>[] settings = await connection.GetServer(connection.GetEndPoints()[0]).ConfigGetAsync("append*");
        return "Server: " + string.Join(", ", settings.Where(s => s.Key is "appendonly" or "appendfsync").Select(s => $"{s.Key} {s.Value}")) + ".";
    }

    public override Task DropAsync() => _queue.DropAsync();

    public override ValueTask DisposeAsync() => _queue.DisposeAsync();

    // CONFIG is an admin command to StackExchange.Redis.
    private Task<ConnectionMultiplexer> AdminAsync()
    {
        ConfigurationOptions configuration = ConfigurationOptions.Parse(_connectionString);
        configuration.AllowAdmin = true;
        return ConnectionMultiplexer.ConnectAsync(configuration);
    }

    /// <summary>
    /// A queue object; <paramref name="role"/> names its connection (CLIENT LIST) and its leases' owner. Its connect timeout is the
    /// string's own (<c>connectTimeout</c>, 5 s unless set). Its stalled check runs every half lease, so that a lease that lapsed
    /// is back in the queue within half a lease of its expiry.
    /// </summary>
    private static Broker Create(string connectionString, Options options, string queueName, string role)
    {
        TimeSpan interval = options.Scaled(options.Lease) / 2;
        return new RedisBroker(
            new RedisLeaseQueue(new RedisLeaseQueueOptions
            {
                ConnectionString = connectionString,
                QueueName = queueName,
                Owner = $"{role}:{Environment.ProcessId}",
                ClientName = $"broker-worker-{role}",
                ConnectTimeout = TimeSpan.FromMilliseconds(Math.Clamp(ConfigurationOptions.Parse(connectionString).ConnectTimeout, 100, 1_024_000)),
                StalledCheckInterval = interval > TimeSpan.FromMilliseconds(10) ? interval : TimeSpan.FromMilliseconds(10),
            }),
            connectionString);
    }
}
