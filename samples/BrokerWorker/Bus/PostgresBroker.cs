using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Threading.Tasks;
using MessageBus;
using MessageBus.Postgres;
using Npgsql;

namespace BrokerWorker.Bus;

/// <summary>The PostgreSQL lease queue as a <see cref="Broker"/>.</summary>
public sealed class PostgresBroker(PostgresLeaseQueue queue, string host) : Broker
{
    private readonly PostgresMessageBus _bus = new(queue);

    public PostgresLeaseQueue LeaseQueue => queue;

    public override string Name => "PostgreSQL";

    public override string Queue => queue.QueueName;

    public override IMessageBus Bus => _bus;

    public override long Reconnects => queue.Reconnects;

    public override async Task SetUpAsync(bool purge)
    {
        await queue.EnsureSchemaAsync();
        if (purge)
        {
            await queue.PurgeAsync();
        }
        else
        {
            await queue.GetCountsAsync(); // a pooled connection, warm, before the clock starts
        }
    }

    public override Task EnqueueAsync(IReadOnlyList<string> payloads) => queue.EnqueueAsync(payloads);

    public override async Task<long> ExpiredRedeliveriesAsync() => (await queue.GetCountsAsync()).ExpiredRedeliveries;

    /// <summary>
    /// A server on this machine: the CPU of every <c>postgres</c> process, with the time of the backends that have exited (their
    /// parent, the postmaster, has reaped them: <c>cutime</c>, <c>cstime</c>). Null for a server elsewhere or without /proc.
    /// </summary>
    public override Task<TimeSpan?> ServerCpuAsync()
    {
        if (!IsLoopback(host) || !Directory.Exists("/proc"))
        {
            return Task.FromResult<TimeSpan?>(null);
        }

        long ticks = 0;
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            try
            {
                if (!int.TryParse(Path.GetFileName(dir), out _) || File.ReadAllText(Path.Combine(dir, "comm")).Trim() != "postgres")
                {
                    continue;
                }

                // Fields after the command's closing parenthesis: utime, stime, cutime, cstime are the 14th to 17th of the line.
                string stat = File.ReadAllText(Path.Combine(dir, "stat"));
                string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                ticks += long.Parse(fields[11]) + long.Parse(fields[12]) + long.Parse(fields[13]) + long.Parse(fields[14]);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
            {
                // The process exited while being read.
            }
        }

        return Task.FromResult<TimeSpan?>(TimeSpan.FromSeconds(ticks / 100.0)); // USER_HZ is 100 on Linux
    }

    public override Task DropAsync() => queue.DropAsync();

    public override ValueTask DisposeAsync() => queue.DisposeAsync();

    internal static bool IsLoopback(string host) =>
        host is "localhost" || (IPAddress.TryParse(host, out IPAddress? address) && IPAddress.IsLoopback(address));

    public static PostgresBroker Create(string connectionString, Options options, string queueName, string role)
    {
        var builder = new NpgsqlConnectionStringBuilder(connectionString) { ApplicationName = $"broker-worker-{role}" };
        return new PostgresBroker(
            new PostgresLeaseQueue(new PostgresLeaseQueueOptions
            {
                ConnectionString = builder.ConnectionString,
                QueueName = queueName,
                Owner = $"{role}:{Environment.ProcessId}",
                ConnectTimeout = options.ConnectTimeout,
            }),
            builder.Host ?? string.Empty);
    }
}
