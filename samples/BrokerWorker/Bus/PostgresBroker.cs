using System;
using System.Collections.Generic;
using System.Data.Common;
using System.Diagnostics;
using System.Threading.Tasks;
using MessageBus.Postgres;
using MessageBus.Postgres.Internal;
using Npgsql;

namespace BrokerWorker.Bus;

/// <summary>The PostgreSQL lease queue as a <see cref="Broker"/> (<c>--bus postgres</c>).</summary>
public sealed class PostgresBroker : Broker
{
    public static readonly BrokerKind Kind = new(
        "postgres", "PostgreSQL", "PRIORITYASYNC_POSTGRES", PostgresLeaseQueue.ValidateConnectionString, e => e is DbException, Create);

    private readonly PostgresLeaseQueue _queue;
    private readonly NpgsqlConnectionStringBuilder _builder;

    private PostgresBroker(PostgresLeaseQueue queue, NpgsqlConnectionStringBuilder builder)
        : base(queue, $"PostgreSQL at {builder.Host}:{builder.Port}, database '{builder.Database ?? builder.Username}'{(builder.Username is null ? "" : $", user '{builder.Username}'")}")
    {
        _queue = queue;
        _builder = builder;
    }

    public override long Reconnects => _queue.Reconnects;

    public override string PlainLoop => "plain Npgsql loop (same statements, one connection, prepared)";

    public override async Task SetUpAsync(bool purge)
    {
        await _queue.EnsureSchemaAsync();
        await (purge ? _queue.PurgeAsync() : _queue.GetCountsAsync()); // or a pooled connection, warm, before the clock starts
    }

    public override Task EnqueueAsync(IReadOnlyList<string> payloads) => _queue.EnqueueAsync(payloads);

    /// <summary>The queue's own statements (the bus's renewal of one lease is its batch statement with one pair) on one open
    /// connection, prepared, with nothing around them: what the bus's pooled connections, retries and lease objects cost on top.</summary>
    public override async Task<(long Cycles, TimeSpan Elapsed)> PlainCyclesAsync(TimeSpan lease, TimeSpan duration)
    {
        var sql = new QueueSql(_queue.QueueName);
        await using var connection = new NpgsqlConnection(_builder.ConnectionString);
        await connection.OpenAsync();
        await using var receive = new NpgsqlCommand(sql.Receive, connection);
        receive.Parameters.AddWithValue("owner", "plain");
        receive.Parameters.AddWithValue("lease", lease);
        await using var renew = new NpgsqlCommand(sql.RenewMany, connection);
        NpgsqlParameter renewIds = renew.Parameters.AddWithValue("ids", new long[1]);
        NpgsqlParameter renewTokens = renew.Parameters.AddWithValue("tokens", new long[1]);
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

                (id, token) = (reader.GetInt64(0), reader.GetInt64(2));
            }

            (renewIds.Value, renewTokens.Value) = (new[] { id }, new[] { token });
            await using (NpgsqlDataReader reader = await renew.ExecuteReaderAsync())
            {
                if (!await reader.ReadAsync() || !reader.GetBoolean(1))
                {
                    throw new InvalidOperationException($"A fresh lease was refused: message {id}.");
                }
            }

            (completeId.Value, completeToken.Value) = (id, token);
            if (await complete.ExecuteScalarAsync() is not true)
            {
                throw new InvalidOperationException($"A fresh lease was refused: message {id}.");
            }

            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }

    public override async Task<string> DurabilityAsync()
    {
        await using var connection = new NpgsqlConnection(_builder.ConnectionString);
        await connection.OpenAsync();
        await using var command = new NpgsqlCommand("SELECT current_setting('fsync'), current_setting('synchronous_commit')", connection);
        await using NpgsqlDataReader reader = await command.ExecuteReaderAsync();
        await reader.ReadAsync();
        return $"Server: fsync {reader.GetString(0)}, synchronous_commit {reader.GetString(1)}.";
    }

    public override Task DropAsync() => _queue.DropAsync();

    public override ValueTask DisposeAsync() => _queue.DisposeAsync();

    /// <summary>A queue object whose connections say who they are (<c>application_name</c>); its connect timeout is the string's own
    /// (Npgsql's <c>Timeout</c>, 15 s unless set).</summary>
    private static Broker Create(string connectionString, Options options, string queueName, string role)
    {
        var builder = new NpgsqlConnectionStringBuilder(connectionString) { ApplicationName = $"broker-worker-{role}" };
        return new PostgresBroker(
            new PostgresLeaseQueue(new PostgresLeaseQueueOptions
            {
                ConnectionString = builder.ConnectionString,
                QueueName = queueName,
                Owner = $"{role}:{Environment.ProcessId}",
                ConnectTimeout = TimeSpan.FromSeconds(builder.Timeout is > 0 and <= 1024 ? builder.Timeout : 1024), // 0: no limit
            }),
            builder);
    }
}
