using System;
using System.Collections.Generic;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using MessageBus.Postgres.Internal;
using Npgsql;

namespace MessageBus.Postgres;

/// <summary>
/// A message queue in one PostgreSQL table with leases: receive takes a message under a lease with a fencing token, renew extends
/// it (any number of leases in one statement), complete finishes it, abandon releases it. The database decides every one of them
/// by its own clock; the counts are its record. Behind <see cref="IMessageBus"/> through <see cref="LeaseQueueBus"/>.
/// </summary>
/// <remarks>
/// <para>Each operation is one statement on a pooled connection. When a connection is lost (the server terminated it, restarted,
/// or the network failed), the operation clears the pool and retries with exponential back-off and jitter for up to
/// <see cref="LeaseQueueOptions.ReconnectTimeout"/>, then throws <see cref="QueueConnectionException"/>. A session the
/// server refuses (wrong credentials, a missing database, a rejected startup parameter) is not retried; nor is a first connection
/// that nothing accepts (refused, unknown host, no answer), while one the server accepts but does not start in time (a busy
/// machine or server) is, within the same budget. A retried statement may already have been applied: complete and abandon
/// recognise their own token and report success again; a retried receive whose first attempt was applied leaves that lease to
/// expire (a redelivery, counted); a retried renewal extends the lease once more. <see cref="EnqueueAsync"/> is retried only when
/// the connection could not be opened, so it never inserts a batch twice.</para>
/// <para>Thread safety: every member may be called from any thread, concurrently.</para>
/// </remarks>
public sealed partial class PostgresLeaseQueue : ILeaseQueue, IAsyncDisposable
{
    private readonly NpgsqlDataSource _dataSource;
    private readonly QueueSql _sql;
    private readonly Reconnector _reconnector;
    private readonly string _host;
    private readonly int _port;
    private readonly int _connectTimeoutSeconds;
    private readonly string _owner;

    /// <summary>Creates a queue object. It does not connect: <see cref="EnsureSchemaAsync"/> is the first call that does.</summary>
    /// <exception cref="ArgumentException">The connection string is missing or malformed, or another option is out of range.</exception>
    public PostgresLeaseQueue(PostgresLeaseQueueOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        NpgsqlConnectionStringBuilder builder = ParseConnectionString(options.ConnectionString);
        options.Validate(
            TimeSpan.FromSeconds(1), QueueNamePattern(), "1 to 40 characters, a lower-case letter or underscore, then lower-case letters, digits or underscores.");
        builder.Timeout = (int)Math.Ceiling(options.ConnectTimeout.TotalSeconds);

        // One round trip and no re-planning per operation. A pooled connection is not reset when returned: the queue's statements
        // leave no session state (its one lock is a transaction's), and the reset (DISCARD ALL, sent with the next statement) made
        // the server drop every prepared statement and plan each statement anew. Its few statements are prepared on each
        // physical connection the second time they run there, and stay prepared while the connection lives.
        builder.NoResetOnClose = true;
        if (builder.MaxAutoPrepare == 0)
        {
            builder.MaxAutoPrepare = 16;
            builder.AutoPrepareMinUsages = 2;
        }
        _connectTimeoutSeconds = builder.Timeout;
        _host = builder.Host!;
        _port = builder.Port;
        string endpoint = $"{_host}:{_port}, database '{builder.Database ?? builder.Username ?? "(default)"}'{(builder.Username is null ? "" : $", user '{builder.Username}'")}";
        _reconnector = new Reconnector(options, "PostgreSQL", endpoint);
        QueueName = options.QueueName;
        _owner = options.Owner;
        _sql = new QueueSql(options.QueueName);
        _dataSource = CreateDataSource(builder);
    }

    /// <summary>The queue's table.</summary>
    public string QueueName { get; }

    /// <summary>How many times an operation of this object lost its connection and retried (this process's view).</summary>
    public long Reconnects => _reconnector.Reconnects;

    /// <summary>
    /// Checks that a connection string is well formed, names a host and has pool settings that go together, without connecting. The
    /// exception's message never repeats the connection string (it may hold a password).
    /// </summary>
    /// <exception cref="ArgumentException">The connection string is empty, malformed, names no host, or has pool settings Npgsql refuses.</exception>
    public static void ValidateConnectionString(string? connectionString) => CreateDataSource(ParseConnectionString(connectionString)).Dispose();

    /// <summary>Creates the queue's table, index and token sequence if they do not exist. Safe to call from several processes at once.</summary>
    /// <exception cref="QueueConnectionException">The database cannot be reached, or refused the session (credentials, database), within
    /// the connect timeout; or it accepts connections but started no session within <see cref="LeaseQueueOptions.ReconnectTimeout"/>.</exception>
    /// <exception cref="PostgresException">The database refused the statement (for example, the user may not create a table there).</exception>
    public Task EnsureSchemaAsync(CancellationToken cancellationToken = default) =>
        ExecuteAsync(
            _sql.Schema,
            async (command, ct) =>
            {
                await using NpgsqlTransaction transaction = await command.Connection!.BeginTransactionAsync(ct).ConfigureAwait(false);
                command.Transaction = transaction;
                await command.ExecuteNonQueryAsync(ct).ConfigureAwait(false);
                await transaction.CommitAsync(ct).ConfigureAwait(false);
                return true;
            },
            cancellationToken,
            firstConnection: true);

    /// <summary>Enqueues messages in one statement, in order.</summary>
    /// <returns>How many messages were enqueued.</returns>
    public Task<int> EnqueueAsync(IReadOnlyList<string> payloads, CancellationToken cancellationToken = default)
    {
        string[] array = LeaseQueueOptions.RequirePayloads(payloads);
        if (array.Length == 0)
        {
            return Task.FromResult(0);
        }

        return ExecuteAsync(
            _sql.Enqueue,
            async (command, ct) =>
            {
                command.Parameters.AddWithValue("payloads", array);
                return await command.ExecuteNonQueryAsync(ct).ConfigureAwait(false);
            },
            cancellationToken,
            retryAfterSend: false);
    }

    /// <summary>
    /// Takes the oldest message that is not completed and not under a current lease, and leases it to the options'
    /// <see cref="LeaseQueueOptions.Owner"/> for <paramref name="leaseDuration"/> from the database's now, with a new fencing token.
    /// A message whose lease expired is redelivered.
    /// </summary>
    /// <param name="leaseDuration">How long the lease lasts unless renewed: 1 ms to 1 day.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply (the database may still have leased a message; it then expires).</param>
    /// <returns>The lease, or <see langword="null"/> when no message is available now.</returns>
    public Task<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        LeaseQueueOptions.RequireLeaseDuration(leaseDuration);
        return ExecuteAsync(
            _sql.Receive,
            async (command, ct) =>
            {
                command.Parameters.AddWithValue("owner", _owner);
                command.Parameters.AddWithValue("lease", leaseDuration);
                await using NpgsqlDataReader reader = await command.ExecuteReaderAsync(ct).ConfigureAwait(false);
                if (!await reader.ReadAsync(ct).ConfigureAwait(false))
                {
                    return null;
                }

                return new Lease(
                    reader.GetInt64(0), reader.GetString(1), reader.GetInt64(2), reader.GetInt32(4), LeaseUntil: reader.GetFieldValue<DateTimeOffset>(3));
            },
            cancellationToken);
    }

    /// <summary>
    /// Renews every lease in <paramref name="leases"/> in one statement (<c>unnest</c> of their ids and tokens): what a worker holding
    /// several leases sends once per interval. Each moves on to <paramref name="leaseDuration"/> from the database's now if its token
    /// is still the message's current one and it has not expired by the database's clock; otherwise it is refused and counted.
    /// </summary>
    /// <param name="leases">Leases this queue's receives returned, of distinct messages.</param>
    /// <param name="leaseDuration">The new lease's length from now: 1 ms to 1 day.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply.</param>
    /// <returns>For each lease in order, whether it was renewed: on <see langword="false"/> the caller must stop working on it.</returns>
    public Task<bool[]> RenewAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(leases);
        LeaseQueueOptions.RequireLeaseDuration(leaseDuration);
        if (leases.Count == 0)
        {
            return Task.FromResult(Array.Empty<bool>());
        }

        long[] ids = new long[leases.Count];
        long[] tokens = new long[leases.Count];
        for (int i = 0; i < ids.Length; i++)
        {
            (ids[i], tokens[i]) = (leases[i].MessageId, leases[i].Token);
        }

        return ExecuteAsync(
            _sql.RenewMany,
            async (command, ct) =>
            {
                command.Parameters.AddWithValue("ids", ids);
                command.Parameters.AddWithValue("tokens", tokens);
                command.Parameters.AddWithValue("lease", leaseDuration);
                var renewed = new Dictionary<long, bool>(ids.Length);
                await using NpgsqlDataReader reader = await command.ExecuteReaderAsync(ct).ConfigureAwait(false);
                while (await reader.ReadAsync(ct).ConfigureAwait(false))
                {
                    renewed[reader.GetInt64(0)] = !reader.IsDBNull(1) && reader.GetBoolean(1);
                }

                bool[] result = new bool[ids.Length];
                for (int i = 0; i < ids.Length; i++)
                {
                    result[i] = renewed.GetValueOrDefault(ids[i]);
                }

                return result;
            },
            cancellationToken);
    }

    /// <summary>
    /// Completes the message, if the lease's token is current and the lease has not expired by the database's clock. A refusal (the
    /// lease was lost, so another delivery may be doing or have done the same work) is counted as a rejected completion. Completing
    /// again with the token that completed the message succeeds and counts nothing.
    /// </summary>
    /// <returns><see langword="true"/> if the message is completed by this lease; <see langword="false"/> if the completion was rejected.</returns>
    public Task<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default) => ExecuteFencedAsync(_sql.Complete, lease, cancellationToken);

    /// <summary>
    /// Releases the lease at once, so that the next receive takes the message without waiting for the lease to expire (graceful
    /// shutdown). Only the current token of an unexpired lease can abandon it.
    /// </summary>
    /// <returns><see langword="true"/> if released; <see langword="false"/> if the lease was no longer this one's.</returns>
    public Task<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default) => ExecuteFencedAsync(_sql.Abandon, lease, cancellationToken);

    /// <summary>Reads the queue's counts, as the database recorded them.</summary>
    public Task<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default) =>
        ExecuteAsync(
            _sql.Counts,
            async (command, ct) =>
            {
                await using NpgsqlDataReader reader = await command.ExecuteReaderAsync(ct).ConfigureAwait(false);
                await reader.ReadAsync(ct).ConfigureAwait(false);
                return new BusCounts(
                    reader.GetInt64(0), reader.GetInt64(1), reader.GetInt64(2), reader.GetInt64(3), reader.GetInt64(4),
                    reader.GetInt64(5), reader.GetInt64(6), reader.GetInt64(7), reader.GetInt64(8), reader.GetInt64(9));
            },
            cancellationToken);

    /// <summary>Deletes every message (counts start again from zero). The token sequence goes on, so old tokens stay stale.</summary>
    public Task PurgeAsync(CancellationToken cancellationToken = default) => ExecuteNonQueryAsync(_sql.Purge, cancellationToken);

    /// <summary>Drops the queue's table and token sequence.</summary>
    public Task DropAsync(CancellationToken cancellationToken = default) => ExecuteNonQueryAsync(_sql.Drop, cancellationToken);

    /// <summary>Closes the pooled connections.</summary>
    public ValueTask DisposeAsync() => _dataSource.DisposeAsync();

    private Task ExecuteNonQueryAsync(string sql, CancellationToken cancellationToken) =>
        ExecuteAsync(sql, (command, ct) => command.ExecuteNonQueryAsync(ct), cancellationToken);

    private Task<bool> ExecuteFencedAsync(string sql, Lease lease, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(lease);
        return ExecuteAsync(
            sql,
            async (command, ct) =>
            {
                command.Parameters.AddWithValue("id", lease.MessageId);
                command.Parameters.AddWithValue("token", lease.Token);
                object? result = await command.ExecuteScalarAsync(ct).ConfigureAwait(false);
                return result is true;
            },
            cancellationToken);
    }

    /// <summary>
    /// Runs one operation, a command of <paramref name="sql"/>, on a pooled connection. A lost connection is retried with back-off
    /// while the reconnect budget allows; a failure after the statement was sent is retried only if <paramref name="retryAfterSend"/>.
    /// On the <paramref name="firstConnection"/>, a failure to open is retried only on a server that accepts connections: a refusal,
    /// unknown host or no answer is for good.
    /// </summary>
    private Task<T> ExecuteAsync<T>(
        string sql,
        Func<NpgsqlCommand, CancellationToken, Task<T>> operation,
        CancellationToken cancellationToken,
        bool retryAfterSend = true,
        bool firstConnection = false) =>
        _reconnector.RunAsync(
            async () =>
            {
                bool sent = false;
                try
                {
                    NpgsqlConnection connection = await OpenAsync(cancellationToken).ConfigureAwait(false);
                    await using (connection.ConfigureAwait(false))
                    {
                        await using NpgsqlCommand command = new(sql, connection);
                        sent = true;
                        return await operation(command, cancellationToken).ConfigureAwait(false);
                    }
                }
                catch (Exception e) when (IsConnectionLoss(e) && !cancellationToken.IsCancellationRequested)
                {
                    // The server may have terminated every pooled connection at once (a restart, pg_terminate_backend of a role's
                    // backends): drop the idle ones rather than fail once on each.
                    _dataSource.Clear();
                    string? busy = firstConnection && !sent ? await WhySessionNotStartedAsync(e).ConfigureAwait(false) : null;
                    throw sent && !retryAfterSend ? _reconnector.Error($"the connection was lost during a statement that is not retried ({e.Message})", e)
                        : firstConnection && !sent && busy is null ? _reconnector.Error(Describe(e), e)
                        : new RetryableConnectionException(busy ?? Describe(e), e, reconnecting: busy is null);
                }
            },
            cancellationToken);

    private async Task<NpgsqlConnection> OpenAsync(CancellationToken cancellationToken)
    {
        try
        {
            return await _dataSource.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (PostgresException e) when (!IsConnectionLoss(e))
        {
            // The server refused the session: wrong credentials, a missing database, a startup parameter it rejects (Options in the
            // connection string). Retrying cannot help.
            throw _reconnector.Error(Describe(e), e);
        }
        catch (NpgsqlException e) when (e is not PostgresException && !e.IsTransient && !cancellationToken.IsCancellationRequested)
        {
            // Refused by the client before any statement, for good: no password given while the server asks for one, an
            // authentication method or TLS setting the two sides do not share. Retrying cannot help either.
            throw _reconnector.Error(Describe(e), e);
        }
    }

    /// <summary>Why the first connection's session did not start, when the server is there (busy, starting up, or not PostgreSQL:
    /// worth retrying); <see langword="null"/> when nothing accepts connections at the address (refused, unknown host, no answer),
    /// or there is no one address to ask (several hosts, a Unix socket).</summary>
    private async Task<string?> WhySessionNotStartedAsync(Exception failure)
    {
        if (failure is PostgresException)
        {
            return Describe(failure); // the server answered: starting up, shutting down
        }

        if (_host.Contains(',', StringComparison.Ordinal) || _host.StartsWith('/')
            || await ServerProbe.TryConnectAsync(_host, _port, TimeSpan.FromSeconds(_connectTimeoutSeconds)).ConfigureAwait(false) is not null)
        {
            return null;
        }

        string what = failure is TimeoutException or NpgsqlException { InnerException: TimeoutException }
            ? $"within the connect timeout ({_connectTimeoutSeconds} s)"
            : $"({Describe(failure)})";
        return $"the server accepts connections but the session did not start {what}: a busy machine or server, or not a PostgreSQL server";
    }

    private static bool IsConnectionLoss(Exception e) => e switch
    {
        PostgresException p => p.SqlState.StartsWith("08", StringComparison.Ordinal)
            || p.SqlState is PostgresErrorCodes.AdminShutdown or PostgresErrorCodes.CrashShutdown or PostgresErrorCodes.CannotConnectNow,
        NpgsqlException n => n.IsTransient,
        TimeoutException => true,
        _ => false,
    };

    private string Describe(Exception e) => e switch
    {
        PostgresException p => $"{p.MessageText} (SQLSTATE {p.SqlState})",

        // Every pooled connection was in use for the whole timeout: Npgsql's message names the pool size and the timeout.
        NpgsqlException { InnerException: TimeoutException } n when n.Message.StartsWith("The connection pool has been exhausted", StringComparison.Ordinal) => n.Message,
        TimeoutException or NpgsqlException { InnerException: TimeoutException } => $"no answer within the connect timeout ({_connectTimeoutSeconds} s)",
        NpgsqlException { InnerException: { } inner } n when inner is not NpgsqlException && inner.Message != n.Message => $"{n.Message}: {inner.Message}",
        _ => e.Message,
    };

    private static NpgsqlConnectionStringBuilder ParseConnectionString(string? connectionString)
    {
        NpgsqlConnectionStringBuilder builder = LeaseQueueOptions.ParseConnectionString(
            connectionString, "PostgreSQL", "Host=127.0.0.1;Port=5432;Database=db;Username=user;Password=...", s => new NpgsqlConnectionStringBuilder(s));
        if (string.IsNullOrWhiteSpace(builder.Host))
        {
            throw new ArgumentException("The PostgreSQL connection string names no Host.", nameof(connectionString));
        }

        if (builder.Port is < 1 or > 65535)
        {
            throw new ArgumentException($"The PostgreSQL connection string's Port {builder.Port} is out of range: 1 to 65535.", nameof(connectionString));
        }

        if (builder.Pooling && builder.MaxPoolSize < 1)
        {
            // Npgsql accepts it, and every open then waits for a free connection until the timeout.
            throw new ArgumentException($"The PostgreSQL connection string's Maximum Pool Size {builder.MaxPoolSize} is out of range: at least 1 (a queue needs a connection).", nameof(connectionString));
        }

        return builder;
    }

    /// <summary>The data source of <paramref name="builder"/>: where Npgsql checks that its pool settings go together (it does not connect).</summary>
    private static NpgsqlDataSource CreateDataSource(NpgsqlConnectionStringBuilder builder)
    {
        try
        {
            return NpgsqlDataSource.Create(builder);
        }
        catch (ArgumentException e)
        {
            // For example Minimum Pool Size above Maximum Pool Size: Npgsql's message names the settings, never the password.
            throw new ArgumentException($"The PostgreSQL connection string's settings do not go together: {e.Message}", e);
        }
    }

    [GeneratedRegex("^[a-z_][a-z0-9_]{0,39}$", RegexOptions.CultureInvariant)]
    private static partial Regex QueueNamePattern();
}
