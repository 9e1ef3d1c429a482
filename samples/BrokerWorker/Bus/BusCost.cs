using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using MessageBus;
using MessageBus.Postgres.Internal;
using MessageBus.Redis;
using MessageBus.Redis.Internal;
using Npgsql;
using StackExchange.Redis;

namespace BrokerWorker.Bus;

/// <summary>
/// <c>--bus-cost</c>: how many receive + renew + complete cycles one process does per second with no work, through the sample's
/// <see cref="IMessageBus"/> (PostgreSQL: a pooled connection per statement; both: the reconnection wrapper, the lease objects) and
/// through a plain client loop running the very same statements (Npgsql, one open connection, prepared) or scripts
/// (StackExchange.Redis, one connection). The difference is the sample's overhead.
/// </summary>
public static class BusCost
{
    public static async Task<int> RunAsync(Options options, TextWriter output, TextWriter error)
    {
        TimeSpan lease = TimeSpan.FromSeconds(30);
        var rows = new List<(string Name, long Cycles, TimeSpan Elapsed)>();

        var memory = new InMemoryMessageBus();
        (long memoryCycles, TimeSpan memoryElapsed) = await CyclesAsync(memory, lease, options.BusCostDuration, () =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                memory.Enqueue("m");
            }
        });
        rows.Add(("in-memory bus (IMessageBus)", memoryCycles, memoryElapsed));

        if (options.Bus != "memory")
        {
            string? connection = BusFactory.ConnectionString(options, out string? problem);
            if (connection is null)
            {
                await error.WriteLineAsync($"BrokerWorker: {problem}");
                return 2;
            }

            string queueName = options.Queue + "_cost";
            await using Broker broker = BusFactory.Create(connection, options, queueName, "cost");
            string durability = "";
            bool measured = await BusFactory.TryAsync(
                async () =>
                {
                    // Enough messages that no loop runs dry. The two loops take turns, three rounds each on a refilled queue, and
                    // each keeps its best round: on a shared machine a round can lose the cores to something else.
                    const int Stock = 50_000;
                    string[] stock = new string[Stock];
                    Array.Fill(stock, "m");
                    string busName = $"{broker.Name}, the sample's bus (IMessageBus over {broker.GetType().Name.Replace("Broker", "LeaseQueue", StringComparison.Ordinal)})";
                    string plainName = broker is RedisBroker
                        ? "Redis, plain StackExchange.Redis loop (same scripts, one connection)"
                        : "PostgreSQL, plain Npgsql loop (same statements, one connection, prepared)";
                    (long Cycles, TimeSpan Elapsed) bestBus = (0, TimeSpan.FromSeconds(1)), bestPlain = (0, TimeSpan.FromSeconds(1));
                    for (int round = 0; round < 3; round++)
                    {
                        await broker.SetUpAsync(purge: true);
                        await broker.EnqueueAsync(stock);
                        bestBus = Best(bestBus, await CyclesAsync(broker.Bus, lease, options.BusCostDuration, refill: null));

                        await broker.SetUpAsync(purge: true);
                        await broker.EnqueueAsync(stock);
                        bestPlain = Best(bestPlain, broker is RedisBroker redis
                            ? await PlainRedisAsync(connection, redis.LeaseQueue, lease, options.BusCostDuration)
                            : await PlainAsync(connection, queueName, lease, options.BusCostDuration));
                    }

                    rows.Add((busName, bestBus.Cycles, bestBus.Elapsed));
                    rows.Add((plainName, bestPlain.Cycles, bestPlain.Elapsed));
                    durability = await DurabilityAsync(broker, connection);
                    await broker.DropAsync();
                },
                connection,
                $"measure the bus on the queue {queueName}",
                error);
            if (!string.IsNullOrEmpty(durability))
            {
                await output.WriteLineAsync(durability);
            }

            if (!measured)
            {
                return 2;
            }
        }

        await output.WriteLineAsync($"receive + renew + complete with no work, one process, one loop, best of 3 rounds of {Format.Sec(options.BusCostDuration)}:");
        await output.WriteLineAsync();
        await output.WriteLineAsync("| bus | cycles/s | µs per cycle | vs plain loop |");
        await output.WriteLineAsync("|---|---|---|---|");
        double plain = rows.Count == 3 ? rows[2].Cycles / rows[2].Elapsed.TotalSeconds : 0;
        foreach ((string name, long cycles, TimeSpan elapsed) in rows)
        {
            double perSecond = cycles / elapsed.TotalSeconds;
            string ratio = plain > 0 && !name.StartsWith("in-memory", StringComparison.Ordinal) ? $"{plain / perSecond:0.00}x" : "";
            await output.WriteLineAsync($"| {name} | {perSecond:0} | {1e6 / perSecond:0.0} | {ratio} |");
        }

        return 0;
    }

    private static (long Cycles, TimeSpan Elapsed) Best((long Cycles, TimeSpan Elapsed) a, (long Cycles, TimeSpan Elapsed) b) =>
        a.Cycles / a.Elapsed.TotalSeconds >= b.Cycles / b.Elapsed.TotalSeconds ? a : b;

    /// <summary>What the server promises for a write it has answered: the figures depend on it (an fsync per write or none).</summary>
    private static async Task<string> DurabilityAsync(Broker broker, string connectionString)
    {
        if (broker is RedisBroker)
        {
            ConfigurationOptions configuration = ConfigurationOptions.Parse(connectionString);
            configuration.AllowAdmin = true;
            await using ConnectionMultiplexer connection = await ConnectionMultiplexer.ConnectAsync(configuration);
            KeyValuePair<string, string>[] settings = await connection.GetServer(configuration.EndPoints[0]).ConfigGetAsync("append*");
            return "Server: " + string.Join(", ", settings.Where(s => s.Key is "appendonly" or "appendfsync").Select(s => $"{s.Key} {s.Value}")) + ".";
        }

        await using var postgres = new NpgsqlConnection(connectionString);
        await postgres.OpenAsync();
        await using var command = new NpgsqlCommand("SELECT current_setting('fsync'), current_setting('synchronous_commit')", postgres);
        await using NpgsqlDataReader reader = await command.ExecuteReaderAsync();
        await reader.ReadAsync();
        return $"Server: fsync {reader.GetString(0)}, synchronous_commit {reader.GetString(1)}.";
    }

    private static async Task<(long Cycles, TimeSpan Elapsed)> CyclesAsync(IMessageBus bus, TimeSpan lease, TimeSpan duration, Action? refill)
    {
        refill?.Invoke();
        long cycles = 0;
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            Lease? message = await bus.ReceiveAsync(lease);
            if (message is null)
            {
                if (refill is null)
                {
                    throw new InvalidOperationException("The bus ran dry during the measurement.");
                }

                refill();
                continue;
            }

            if (!await bus.RenewAsync(message, lease) || !await bus.CompleteAsync(message))
            {
                throw new InvalidOperationException($"A fresh lease was refused: message {message.MessageId}.");
            }

            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }

    private static async Task<(long Cycles, TimeSpan Elapsed)> PlainRedisAsync(string connectionString, RedisLeaseQueue queue, TimeSpan lease, TimeSpan duration)
    {
        (RedisKey[] receiveKeys, RedisKey[] renewKeys, RedisKey[] completeKeys, RedisValue prefix, RedisValue owner) = queue.ScriptKeys;
        await using ConnectionMultiplexer connection = await ConnectionMultiplexer.ConnectAsync(connectionString);
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
            long id = (long)fields[0];
            long token = (long)fields[2];
            var renewed = (long[])(await db.ScriptEvaluateAsync(QueueScripts.Renew, renewKeys, [prefix, ms, id, token]))!;
            if (renewed[1] != 1 || (int)await db.ScriptEvaluateAsync(QueueScripts.Complete, completeKeys, [prefix, id, token]) != 1)
            {
                throw new InvalidOperationException($"A fresh lease was refused: message {id}.");
            }

            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }

    private static async Task<(long Cycles, TimeSpan Elapsed)> PlainAsync(string connectionString, string table, TimeSpan lease, TimeSpan duration)
    {
        var sql = new QueueSql(table);
        await using var connection = new NpgsqlConnection(connectionString);
        await connection.OpenAsync();
        await using var receive = new NpgsqlCommand(sql.Receive, connection);
        receive.Parameters.AddWithValue("owner", "plain");
        receive.Parameters.AddWithValue("lease", lease);
        await using var renew = new NpgsqlCommand(sql.Renew, connection);
        NpgsqlParameter renewId = renew.Parameters.AddWithValue("id", 0L);
        NpgsqlParameter renewToken = renew.Parameters.AddWithValue("token", 0L);
        renew.Parameters.AddWithValue("lease", lease);
        await using var complete = new NpgsqlCommand(sql.Complete, connection);
        NpgsqlParameter completeId = complete.Parameters.AddWithValue("id", 0L);
        NpgsqlParameter completeToken = complete.Parameters.AddWithValue("token", 0L);
        await receive.PrepareAsync();
        await renew.PrepareAsync();
        await complete.PrepareAsync();

        long cycles = 0;
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            long id, token;
            await using (NpgsqlDataReader reader = await receive.ExecuteReaderAsync())
            {
                if (!await reader.ReadAsync())
                {
                    throw new InvalidOperationException("The queue ran dry during the measurement.");
                }

                id = reader.GetInt64(0);
                token = reader.GetInt64(3);
            }

            renewId.Value = id;
            renewToken.Value = token;
            await using (NpgsqlDataReader reader = await renew.ExecuteReaderAsync())
            {
                if (!await reader.ReadAsync() || !reader.GetBoolean(0))
                {
                    throw new InvalidOperationException($"A fresh lease was refused: message {id}.");
                }
            }

            completeId.Value = id;
            completeToken.Value = token;
            if (await complete.ExecuteScalarAsync() is not true)
            {
                throw new InvalidOperationException($"A fresh lease was refused: message {id}.");
            }

            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }
}
