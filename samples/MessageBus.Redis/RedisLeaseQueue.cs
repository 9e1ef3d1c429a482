using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using MessageBus.Redis.Internal;
using StackExchange.Redis;

namespace MessageBus.Redis;

/// <summary>
/// A message queue in Redis with leases, in BullMQ's manner: receive moves a message to the active list and locks it with a new
/// fencing token that expires after the lease; renew extends the lock while it holds the token (one call renews any number of
/// leases); complete and abandon check the token; a periodic stalled check puts messages whose lock expired back at the front of
/// the queue. Every decision is one Lua script, atomic on the server and judged by the server's clock; the counts are its record.
/// Behind <see cref="IMessageBus"/> through <see cref="LeaseQueueBus"/>.
/// </summary>
/// <remarks>
/// <para><b>Durability</b> is the server's: with an append-only file synced on every write (<c>appendonly yes</c>,
/// <c>appendfsync always</c>, as the tests and the BrokerWorker sample run it), a script the server has answered survives a crash
/// or a restart. With the default <c>appendfsync everysec</c> a crash loses up to a second of writes (a completed message may be
/// delivered again; an enqueued one may be gone); without persistence a restart loses the queue.</para>
/// <para><b>Connections:</b> one multiplexed connection (StackExchange.Redis), which reconnects by itself. An operation whose
/// connection was lost, or that timed out while the server was away, is retried with exponential back-off and jitter for up to
/// <see cref="LeaseQueueOptions.ReconnectTimeout"/>, then throws <see cref="QueueConnectionException"/>. A retried script
/// may already have been applied: complete and abandon recognise their own token and report success again; a retried receive
/// whose first attempt was applied leaves that lease to expire (a redelivery, counted); a retried renewal extends the lease once
/// more. <see cref="EnqueueAsync"/> is retried only when its script was never sent, so it never enqueues a batch twice.</para>
/// <para>Thread safety: every member may be called from any thread, concurrently.</para>
/// </remarks>
public sealed partial class RedisLeaseQueue : ILeaseQueue, IAsyncDisposable
{
    private const int EnqueueBatch = 500;

    private readonly ConfigurationOptions _configuration;
    private readonly string _endpoint;
    private readonly Reconnector _reconnector;
    private readonly TimeSpan? _stalledCheckInterval;
    private readonly string _prefix;
    private readonly RedisKey _wait;
    private readonly RedisKey _active;
    private readonly RedisKey _counts;
    private readonly RedisKey _nextId;
    private readonly RedisKey _nextToken;
    private readonly RedisKey _stalledGuard;
    private readonly RedisValue _owner;
    private readonly CancellationTokenSource _disposing = new();
    private readonly Lock _connectGate = new();
    private Task<ConnectionMultiplexer>? _connecting;
    private Task? _stalledLoop;

    /// <summary>Creates a queue object. It does not connect: <see cref="ConnectAsync"/> (or the first operation) does.</summary>
    /// <exception cref="ArgumentException">The connection string is missing or malformed, or another option is out of range.</exception>
    public RedisLeaseQueue(RedisLeaseQueueOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _configuration = ParseConnectionString(options.ConnectionString);
        options.Validate(TimeSpan.FromMilliseconds(100), QueueNamePattern(), "1 to 100 characters, letters, digits, '_', '-' or '.'.");
        if (options.StalledCheckInterval is { } interval)
        {
            LeaseQueueOptions.RequireRange(interval, TimeSpan.FromMilliseconds(10), TimeSpan.FromDays(1), nameof(options.StalledCheckInterval));
        }

        // Fail the first connection at once (the caller reports it); once connected, the multiplexer reconnects in the background.
        _configuration.AbortOnConnectFail = true;
        _configuration.ConnectRetry = 1;
        _configuration.ConnectTimeout = (int)options.ConnectTimeout.TotalMilliseconds;
        if (options.ClientName is not null)
        {
            _configuration.ClientName = options.ClientName;
        }

        (string host, int port) = HostAndPort(_configuration.EndPoints[0]);
        _endpoint = port == 0 ? host : $"{host}:{port}";
        QueueName = options.QueueName;
        _owner = options.Owner;
        _reconnector = new Reconnector(options, "Redis", _endpoint);
        _stalledCheckInterval = options.StalledCheckInterval;
        _prefix = "{" + options.QueueName + "}";
        _wait = _prefix + ":wait";
        _active = _prefix + ":active";
        _counts = _prefix + ":counts";
        _nextId = _prefix + ":next-id";
        _nextToken = _prefix + ":next-token";
        _stalledGuard = _prefix + ":stalled-check";
    }

    /// <summary>The queue's name; its keys start with <c>{QueueName}:</c>.</summary>
    public string QueueName { get; }

    /// <summary>The server, <c>host:port</c>.</summary>
    public string Endpoint => _endpoint;

    /// <summary>How many times this object's connection was restored after a loss, plus the retries of its operations (this process's view).</summary>
    public long Reconnects => _reconnector.Reconnects;

    /// <summary>
    /// Checks that a connection string is well formed and names a server, without connecting. The exception's message never repeats
    /// the connection string (it may hold a password).
    /// </summary>
    /// <exception cref="ArgumentException">The connection string is empty, malformed or names no server.</exception>
    public static void ValidateConnectionString(string? connectionString) => ParseConnectionString(connectionString);

    /// <summary>Connects (once; later calls return at once) and checks that the server accepts the credentials.</summary>
    /// <exception cref="QueueConnectionException">The server cannot be reached or refused the credentials (not retried), or it
    /// accepted the connection but never completed the handshake within the connect timeout (retried within the reconnect timeout).</exception>
    public async Task ConnectAsync(CancellationToken cancellationToken = default)
    {
        ConnectionMultiplexer connection = await GetConnectionAsync().WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await connection.GetDatabase().PingAsync().ConfigureAwait(false);
        }
        catch (RedisServerException e)
        {
            // For example NOAUTH: connected, but the server refuses every command.
            throw _reconnector.Error(FirstLine(e.Message), e);
        }
    }

    /// <summary>Enqueues messages in order, up to 500 in one script.</summary>
    /// <returns>How many messages were enqueued.</returns>
    public async Task<int> EnqueueAsync(IReadOnlyList<string> payloads, CancellationToken cancellationToken = default)
    {
        string[] all = LeaseQueueOptions.RequirePayloads(payloads);
        int enqueued = 0;
        for (int start = 0; start < all.Length; start += EnqueueBatch)
        {
            var args = new RedisValue[Math.Min(EnqueueBatch, all.Length - start) + 1];
            args[0] = _prefix;
            for (int i = 1; i < args.Length; i++)
            {
                args[i] = all[start + i - 1];
            }

            RedisResult result = await ExecuteAsync(db => db.ScriptEvaluateAsync(QueueScripts.Enqueue, [_nextId, _wait, _counts], args), retryAfterSend: false, cancellationToken).ConfigureAwait(false);
            enqueued += (int)result;
        }

        return enqueued;
    }

    /// <summary>
    /// Takes the oldest waiting message and leases it to the options' <see cref="LeaseQueueOptions.Owner"/> for
    /// <paramref name="leaseDuration"/> from the server's now, with a new fencing token. A message whose lock expired is waiting
    /// again once a stalled check has moved it back.
    /// </summary>
    /// <param name="leaseDuration">How long the lease lasts unless renewed: 1 ms to 1 day.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply (the server may still have leased a message; it then expires).</param>
    /// <returns>The lease, or <see langword="null"/> when no message is waiting now.</returns>
    public async Task<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        long ms = LeaseMilliseconds(leaseDuration);
        StartStalledChecks();
        RedisResult result = await ExecuteAsync(
            db => db.ScriptEvaluateAsync(QueueScripts.Receive, [_wait, _active, _nextToken, _counts], [_prefix, ms, _owner]),
            retryAfterSend: true,
            cancellationToken).ConfigureAwait(false);
        if (result.IsNull)
        {
            return null;
        }

        var fields = (RedisResult[])result!;
        return new Lease((long)fields[0], (string)fields[1]!, (long)fields[2], (int)fields[3], LeaseUntil: DateTimeOffset.FromUnixTimeMilliseconds((long)fields[4]));
    }

    /// <summary>
    /// Renews every lease in <paramref name="leases"/> in one script, as BullMQ's lock extender renews all of a worker's locks: each
    /// lock that still holds its lease's token (it has not expired, and no other delivery took over) gets
    /// <paramref name="leaseDuration"/> from the server's now; any other lease is refused and counted.
    /// </summary>
    /// <returns>For each lease in order, whether it was renewed: on <see langword="false"/> the caller must stop working on it.</returns>
    public async Task<bool[]> RenewAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(leases);
        long ms = LeaseMilliseconds(leaseDuration);
        if (leases.Count == 0)
        {
            return [];
        }

        var args = new RedisValue[2 + (2 * leases.Count)];
        args[0] = _prefix;
        args[1] = ms;
        for (int i = 0; i < leases.Count; i++)
        {
            args[2 + (2 * i)] = leases[i].MessageId;
            args[3 + (2 * i)] = leases[i].Token;
        }

        var reply = (long[])(await ExecuteAsync(db => db.ScriptEvaluateAsync(QueueScripts.Renew, [_counts], args), retryAfterSend: true, cancellationToken).ConfigureAwait(false))!;
        var renewed = new bool[leases.Count];
        for (int i = 0; i < renewed.Length; i++)
        {
            renewed[i] = reply[i + 1] == 1;
        }

        return renewed;
    }

    /// <summary>Completes the message if its lock still holds the lease's token. A refusal is counted as a rejected completion;
    /// completing again with the token that completed it succeeds and counts nothing.</summary>
    /// <returns><see langword="true"/> if the message is completed by this lease; <see langword="false"/> if the completion was rejected.</returns>
    public async Task<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        RedisResult result = await ExecuteAsync(
            db => db.ScriptEvaluateAsync(QueueScripts.Complete, [_active, _counts], [_prefix, lease.MessageId, lease.Token]),
            retryAfterSend: true,
            cancellationToken).ConfigureAwait(false);
        return (int)result == 1;
    }

    /// <summary>Releases the lease at once and puts the message first in line (graceful shutdown). Only the token its lock holds can.</summary>
    /// <returns><see langword="true"/> if released; <see langword="false"/> if the lease was no longer this one's.</returns>
    public async Task<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        RedisResult result = await ExecuteAsync(
            db => db.ScriptEvaluateAsync(QueueScripts.Abandon, [_wait, _active, _counts], [_prefix, lease.MessageId, lease.Token]),
            retryAfterSend: true,
            cancellationToken).ConfigureAwait(false);
        return (int)result == 1;
    }

    /// <summary>
    /// The stalled check, now: every message in the active list whose lock has expired goes back to the front of the queue, and its
    /// next delivery counts as an expired redelivery. The periodic check (<see cref="RedisLeaseQueueOptions.StalledCheckInterval"/>)
    /// runs the same script, at most once per interval across all workers.
    /// </summary>
    /// <returns>How many messages were moved back.</returns>
    public Task<int> CheckStalledAsync(CancellationToken cancellationToken = default) => CheckStalledGuardedAsync(guardMs: 0, cancellationToken);

    /// <summary>Reads the queue's counts, as the server recorded them.</summary>
    public async Task<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        var c = (long[])(await ExecuteAsync(db => db.ScriptEvaluateAsync(QueueScripts.Counts, [_counts, _wait, _active]), retryAfterSend: true, cancellationToken).ConfigureAwait(false))!;
        return new BusCounts(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]);
    }

    /// <summary>Deletes every message and count. The token counter goes on, so old tokens stay stale.</summary>
    public Task PurgeAsync(CancellationToken cancellationToken = default) => DeleteKeysAsync(keepTokens: true, cancellationToken);

    /// <summary>Deletes every key of the queue, the token counter included.</summary>
    public Task DropAsync(CancellationToken cancellationToken = default) => DeleteKeysAsync(keepTokens: false, cancellationToken);

    /// <summary>Stops the periodic stalled check and closes the connection.</summary>
    public async ValueTask DisposeAsync()
    {
        await _disposing.CancelAsync().ConfigureAwait(false);
        if (_stalledLoop is { } loop)
        {
            await loop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        if (_connecting is { IsCompletedSuccessfully: true } connecting)
        {
            await connecting.Result.DisposeAsync().ConfigureAwait(false);
        }

        _disposing.Dispose();
    }

    /// <summary>The keys and arguments of the queue's scripts, for a caller that runs them itself (the BrokerWorker's plain-client loop).</summary>
    internal (RedisKey[] Receive, RedisKey[] Renew, RedisKey[] Complete, RedisValue Prefix, RedisValue Owner) ScriptKeys =>
        ([_wait, _active, _nextToken, _counts], [_counts], [_active, _counts], _prefix, _owner);

    private async Task DeleteKeysAsync(bool keepTokens, CancellationToken cancellationToken)
    {
        ConnectionMultiplexer connection = await GetConnectionAsync().WaitAsync(cancellationToken).ConfigureAwait(false);
        IServer server = connection.GetServer(_configuration.EndPoints[0]);
        var keys = new List<RedisKey>();
        await foreach (RedisKey key in server.KeysAsync(pattern: _prefix + ":*", pageSize: 1000).WithCancellation(cancellationToken).ConfigureAwait(false))
        {
            if (!keepTokens || key != _nextToken)
            {
                keys.Add(key);
            }
        }

        IDatabase db = connection.GetDatabase();
        for (int i = 0; i < keys.Count; i += 1000)
        {
            await db.KeyDeleteAsync([.. keys.GetRange(i, Math.Min(1000, keys.Count - i))]).ConfigureAwait(false);
        }
    }

    private void StartStalledChecks()
    {
        if (_stalledCheckInterval is null || _stalledLoop is not null)
        {
            return;
        }

        lock (_connectGate)
        {
            _stalledLoop ??= Task.Run(() => RunStalledChecksAsync(_stalledCheckInterval.Value, _disposing.Token));
        }
    }

    private async Task RunStalledChecksAsync(TimeSpan interval, CancellationToken cancellationToken)
    {
        // The guard is a little shorter than the interval, so that the worker whose turn it is does not find the previous guard
        // still set by a millisecond and skip a whole interval.
        long guard = Math.Max(1, (long)(interval.TotalMilliseconds * 0.9));
        using var timer = new PeriodicTimer(interval);
        while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false))
        {
            try
            {
                await CheckStalledGuardedAsync(guard, cancellationToken).ConfigureAwait(false);
            }
            catch (QueueConnectionException)
            {
                // The server is away for longer than the reconnect budget: the next tick tries again.
            }
        }
    }

    // guardMs: the checks of every worker run at most once per that many milliseconds (0: now, whatever the guard).
    private async Task<int> CheckStalledGuardedAsync(long guardMs, CancellationToken cancellationToken) =>
        (int)await ExecuteAsync(
            db => db.ScriptEvaluateAsync(QueueScripts.CheckStalled, [_active, _wait, _stalledGuard], [_prefix, guardMs]),
            retryAfterSend: true,
            cancellationToken).ConfigureAwait(false);

    /// <summary>
    /// Runs one script. A lost connection or a timeout is retried with back-off within the reconnect budget; a failure after the
    /// script was sent is retried only if <paramref name="retryAfterSend"/>.
    /// </summary>
    private async Task<RedisResult> ExecuteAsync(Func<IDatabase, Task<RedisResult>> operation, bool retryAfterSend, CancellationToken cancellationToken)
    {
        IDatabase db = (await GetConnectionAsync().WaitAsync(cancellationToken).ConfigureAwait(false)).GetDatabase();
        return await _reconnector.RunAsync(
            async () =>
            {
                try
                {
                    return await operation(db).WaitAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (Exception e) when (IsConnectionLoss(e) && !cancellationToken.IsCancellationRequested)
                {
                    bool sent = e switch
                    {
                        RedisConnectionException c => c.CommandStatus is not (CommandStatus.WaitingToBeSent or CommandStatus.WaitingInBacklog),
                        RedisTimeoutException t => t.Commandstatus is not (CommandStatus.WaitingToBeSent or CommandStatus.WaitingInBacklog),
                        _ => true, // LOADING: refused by a server still reading its data; nothing applied, but say sent to be safe
                    };
                    throw sent && !retryAfterSend
                        ? _reconnector.Error($"the connection was lost during a script that is not retried ({FirstLine(e.Message)})", e)
                        : new RetryableConnectionException(Reason(e), e, reconnecting: true);
                }
            },
            cancellationToken).ConfigureAwait(false);
    }

    private Task<ConnectionMultiplexer> GetConnectionAsync()
    {
        Task<ConnectionMultiplexer>? connecting = _connecting;
        if (connecting is { IsFaulted: false, IsCanceled: false })
        {
            return connecting;
        }

        lock (_connectGate)
        {
            // A failed first connection is not kept: the next call tries again.
            if (_connecting is null || _connecting.IsFaulted || _connecting.IsCanceled)
            {
                _connecting = ConnectCoreAsync();
            }

            return _connecting;
        }
    }

    // Unreachable, refused or credentials rejected: at once. Any other failure on a server that accepts connections (a busy server,
    // this process starting on a busy machine, a server at its client limit): retried with back-off within the reconnect budget, as
    // a lost connection is, and not by raising the connect timeout, which also bounds each reconnection after an outage.
    private Task<ConnectionMultiplexer> ConnectCoreAsync()
    {
        CancellationToken disposing = _disposing.Token;
        return _reconnector.RunAsync(
            async () =>
            {
                long attemptStart = Stopwatch.GetTimestamp();
                try
                {
                    ConnectionMultiplexer connection = await ConnectionMultiplexer.ConnectAsync(_configuration).ConfigureAwait(false);
                    if (disposing.IsCancellationRequested)
                    {
                        await connection.DisposeAsync().ConfigureAwait(false); // connected after DisposeAsync: nobody else would close it
                        throw new ObjectDisposedException(nameof(RedisLeaseQueue));
                    }

                    // The multiplexer reconnects by itself, and commands issued meanwhile wait for it: count each restored
                    // connection, so that a caller sees the outage even when no operation had to retry.
                    connection.ConnectionRestored += (_, e) =>
                    {
                        if (e.ConnectionType == ConnectionType.Interactive)
                        {
                            _reconnector.CountReconnect();
                        }
                    };
                    return connection;
                }
                catch (RedisConnectionException e)
                {
                    if (e.FailureType is ConnectionFailureType.AuthenticationFailure)
                    {
                        throw _reconnector.Error(Reason(e), e);
                    }

                    // StackExchange.Redis says only that it could not connect: ask the network why (refused, unknown host, no answer).
                    (string why, bool accepts) = await WhyNotConnectedAsync(e, Stopwatch.GetElapsedTime(attemptStart)).ConfigureAwait(false);
                    throw accepts ? new RetryableConnectionException(why, e, reconnecting: false) : _reconnector.Error(why, e);
                }
            },
            disposing);
    }

    /// <summary>Why a connection attempt that failed with <paramref name="failure"/> after <paramref name="waited"/> failed, as the
    /// network tells, and whether the server accepts connections (so that the failure is the handshake's: worth retrying).</summary>
    /// <remarks>StackExchange.Redis seldom says why: a server that closes the connection, and a connection still being set up after
    /// half the connect timeout (abandoned by its reconnect policy, as a process starting on a busy machine meets it), fail alike.</remarks>
    private async Task<(string Why, bool Accepts)> WhyNotConnectedAsync(RedisConnectionException failure, TimeSpan waited)
    {
        (string host, int port) = HostAndPort(_configuration.EndPoints[0]);
        if (port == 0)
        {
            return (Reason(failure), false);
        }

        int timeoutMs = _configuration.ConnectTimeout;
        switch (await ServerProbe.TryConnectAsync(host, port, TimeSpan.FromMilliseconds(timeoutMs)).ConfigureAwait(false))
        {
            case System.Net.Sockets.SocketException e:
                return ($"no connection: {e.Message}", false);
            case TimeoutException:
                return ($"no answer within the connect timeout ({timeoutMs} ms)", false);
        }

        string why = waited >= TimeSpan.FromMilliseconds(timeoutMs * 0.9)
            ? $"the Redis handshake did not finish within the connect timeout ({timeoutMs} ms): a busy machine or server, or not a Redis server"
            : $"the Redis connection failed after {waited.TotalMilliseconds:0} ms" +
              (Innermost(failure) is { } inner && inner != failure ? $" ({FirstLine(inner.Message)})" : "") +
              ": a busy machine, a server at its client limit, or not a Redis server";
        return ($"the server accepts connections but {why}", true);
    }

    private static bool IsConnectionLoss(Exception e) => e switch
    {
        RedisConnectionException c => c.FailureType is not ConnectionFailureType.AuthenticationFailure,
        RedisTimeoutException => true,
        RedisServerException s => s.Message.StartsWith("LOADING", StringComparison.Ordinal) || s.Message.StartsWith("BUSY", StringComparison.Ordinal),
        _ => false,
    };

    /// <summary>One line for a failure, never the configuration string (StackExchange.Redis's messages can run to many lines).</summary>
    private static string Reason(Exception e) => e switch
    {
        RedisConnectionException { FailureType: ConnectionFailureType.AuthenticationFailure } a =>
            $"the server refused the credentials ({FirstLine(a.InnerException?.Message ?? a.Message).Replace("SimpleError: ", "", StringComparison.Ordinal)})",
        RedisConnectionException c when Innermost(c) is { } inner && inner != c => $"{Name(c.FailureType)}: {FirstLine(inner.Message)}",
        RedisConnectionException c => $"{Name(c.FailureType)} ({FirstLine(c.Message)})",
        RedisTimeoutException => "no answer within the timeout",
        _ => FirstLine(e.Message),
    };

    private static Exception? Innermost(Exception e)
    {
        Exception current = e;
        while (current.InnerException is { } inner)
        {
            current = inner;
        }

        return current;
    }

    private static string Name(ConnectionFailureType type) => type switch
    {
        ConnectionFailureType.UnableToResolvePhysicalConnection or ConnectionFailureType.UnableToConnect => "no connection",
        ConnectionFailureType.SocketFailure => "the connection failed",
        ConnectionFailureType.SocketClosed => "the connection was closed",
        ConnectionFailureType.Loading => "the server is loading its data",
        _ => type.ToString(),
    };

    private static string FirstLine(string message)
    {
        int end = message.IndexOfAny(['\r', '\n']);
        return (end < 0 ? message : message[..end]).Trim();
    }

    /// <summary>The server's host and port (Redis's 6379 when the string names none); port 0 for an endpoint of another kind.</summary>
    private static (string Host, int Port) HostAndPort(EndPoint endpoint) => endpoint switch
    {
        DnsEndPoint d => (d.Host, d.Port == 0 ? 6379 : d.Port),
        IPEndPoint i => (i.Address.ToString(), i.Port == 0 ? 6379 : i.Port),
        _ => (endpoint.ToString() ?? "(unknown)", 0),
    };

    private static ConfigurationOptions ParseConnectionString(string? connectionString)
    {
        ConfigurationOptions configuration = LeaseQueueOptions.ParseConnectionString(
            connectionString, "Redis", "127.0.0.1:6379,password=...", ConfigurationOptions.Parse);
        if (configuration.EndPoints.Count == 0)
        {
            throw new ArgumentException("The Redis connection string names no server (host:port).", nameof(connectionString));
        }

        if (configuration.EndPoints.Count > 1)
        {
            throw new ArgumentException($"The Redis connection string names {configuration.EndPoints.Count} servers; this queue uses one.", nameof(connectionString));
        }

        if (configuration.EndPoints[0] is DnsEndPoint { Port: < 0 or > 65535 } or IPEndPoint { Port: < 0 or > 65535 })
        {
            throw new ArgumentException("The Redis connection string's port is out of range: 1 to 65535.", nameof(connectionString));
        }

        return configuration;
    }

    private static long LeaseMilliseconds(TimeSpan leaseDuration)
    {
        LeaseQueueOptions.RequireLeaseDuration(leaseDuration);
        return (long)Math.Ceiling(leaseDuration.TotalMilliseconds);
    }

    [GeneratedRegex("^[A-Za-z0-9_.-]{1,100}$", RegexOptions.CultureInvariant)]
    private static partial Regex QueueNamePattern();
}
