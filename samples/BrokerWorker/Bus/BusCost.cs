using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
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
            bool measured = await BusFactory.TryAsync(
                async () =>
                {
                    // Enough messages that neither loop runs dry; both loops take from the same refilled queue.
                    const int Stock = 50_000;
                    string[] stock = new string[Stock];
                    Array.Fill(stock, "m");
                    await broker.SetUpAsync(purge: true);
                    await broker.EnqueueAsync(stock);
                    (long cycles, TimeSpan elapsed) = await CyclesAsync(broker.Bus, lease, options.BusCostDuration, refill: null);
                    rows.Add(($"{broker.Name}, the sample's bus (IMessageBus over {broker.GetType().Name.Replace("Broker", "LeaseQueue", StringComparison.Ordinal)})", cycles, elapsed));

                    await broker.SetUpAsync(purge: true);
                    await broker.EnqueueAsync(stock);
                    if (broker is RedisBroker redis)
                    {
                        (cycles, elapsed) = await PlainRedisAsync(connection, redis.LeaseQueue, lease, options.BusCostDuration);
                        rows.Add(("Redis, plain StackExchange.Redis loop (same scripts, one connection)", cycles, elapsed));
                    }
                    else
                    {
                        (cycles, elapsed) = await PlainAsync(connection, queueName, lease, options.BusCostDuration);
                        rows.Add(("PostgreSQL, plain Npgsql loop (same statements, one connection, prepared)", cycles, elapsed));
                    }

                    await broker.DropAsync();
                },
                connection,
                $"measure the bus on the queue {queueName}",
                error);
            if (!measured)
            {
                return 2;
            }
        }

        await output.WriteLineAsync($"receive + renew + complete with no work, one process, one loop, {Format.Sec(options.BusCostDuration)} each:");
        await output.WriteLineAsync();
        await output.WriteLineAsync("| bus | cycles/s | µs per cycle |");
        await output.WriteLineAsync("|---|---|---|");
        foreach ((string name, long cycles, TimeSpan elapsed) in rows)
        {
            double perSecond = cycles / elapsed.TotalSeconds;
            await output.WriteLineAsync($"| {name} | {perSecond:0} | {1e6 / perSecond:0.0} |");
        }

        return 0;
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
