using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using MessageBus.RabbitMq.Internal;
using RabbitMQ.Client;
using RabbitMQ.Client.Events;
using RabbitMQ.Client.Exceptions;

namespace MessageBus.RabbitMq;

/// <summary>
/// A RabbitMQ queue behind <see cref="ILeaseQueue"/>: receive takes a message with <c>basic.get</c>, which the channel then holds
/// unacknowledged; complete records the completion and acknowledges, abandon requeues. RabbitMQ has no lease by time: this object
/// keeps one (README, "Leases"). A delivery not renewed within its lease is requeued (<c>basic.nack</c>) by a timer on the thread
/// pool, and a lost connection loses every delivery it held at once; the broker redelivers both.
/// The counts come from the queue's record, a stream every queue object appends its events to and reads back, so that every
/// process folds the same counts and the first completion of a message is the one that counts (README, "The record").
/// </summary>
/// <remarks>
/// <para><b>Durability:</b> a durable queue of persistent messages published with publisher confirms, and the record's events
/// confirmed before the step they stand for: nothing the broker confirmed is lost when it restarts.</para>
/// <para><b>Connections:</b> one connection (a channel for the messages, one for confirmed publishing, one reading the record).
/// When it is lost, every delivery it held is refused from then on, and an operation reconnects and retries with back-off and
/// jitter for up to <see cref="LeaseQueueOptions.ReconnectTimeout"/>, then throws <see cref="QueueConnectionException"/>; the
/// first connection is not retried when nothing accepts it or the credentials are refused. <see cref="EnqueueAsync"/> is not
/// retried once it has published, so it never enqueues a batch twice.</para>
/// <para>Thread safety: every member may be called from any thread, concurrently, except <see cref="PurgeAsync"/> and
/// <see cref="DropAsync"/>, which no other queue object may use the queue during.</para>
/// </remarks>
public sealed partial class RabbitMqLeaseQueue : ILeaseQueue, IAsyncDisposable
{
    private const int KeptCompletions = 1024; // completed deliveries remembered for a retried complete

    private readonly ConnectionFactory _factory;
    private readonly Reconnector _reconnector;
    private readonly string _owner; // names the connection and the record's events
    private readonly string _recordName;
    private readonly QueueRecord _record;
    private readonly ConcurrentDictionary<long, Held> _held = new();
    private readonly ConcurrentQueue<long> _completed = new();
    private readonly ConcurrentDictionary<long, Task> _background = new(); // events not awaited by their callers
    private readonly SemaphoreSlim _connecting = new(1, 1);
    private readonly ITimer _expiry;
    private TimeSpan _checkEvery = Timeout.InfiniteTimeSpan;
    private Session? _session;
    private bool _everConnected;
    private long _lastToken;

    /// <summary>Creates a queue object. It does not connect: <see cref="ConnectAsync"/> (or the first operation) does.</summary>
    /// <exception cref="ArgumentException">The connection string is not an AMQP URI, or another option is out of range.</exception>
    public RabbitMqLeaseQueue(RabbitMqLeaseQueueOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _factory = RabbitMqConnection.CreateFactory(options.ConnectionString);
        options.Validate(TimeSpan.FromMilliseconds(100), QueueNamePattern(), "1 to 200 characters, letters, digits, '_', '-' or '.'.");
        _factory.RequestedConnectionTimeout = _factory.HandshakeContinuationTimeout = options.ConnectTimeout;
        _factory.AutomaticRecoveryEnabled = false; // a channel per connection: a tag is never acknowledged on a later channel
        _reconnector = new Reconnector(options, "RabbitMQ", RabbitMqConnection.Endpoint(_factory));
        QueueName = options.QueueName;
        _owner = options.Owner;
        _recordName = options.QueueName + ".record";
        _record = new QueueRecord($"{options.Owner.Replace(' ', '_')}/{Random.Shared.Next():x8}");
        _expiry = TimeProvider.System.CreateTimer(_ => ExpireLapsed(), null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>The queue's name; its record is the stream <c>{QueueName}.record</c>.</summary>
    public string QueueName { get; }

    /// <summary>The server, <c>host:port</c>.</summary>
    public string Endpoint => RabbitMqConnection.Endpoint(_factory);

    /// <summary>How many times this object's connection was opened again after a loss, plus the retries of its operations.</summary>
    public long Reconnects => _reconnector.Reconnects;

    /// <summary>Checks that a connection string is an AMQP URI with a host, without connecting; the message never repeats it.</summary>
    /// <exception cref="ArgumentException">It is not.</exception>
    public static void ValidateConnectionString(string? connectionString) => RabbitMqConnection.CreateFactory(connectionString);

    /// <summary>Connects, declares the queue and its record if missing, and starts reading the record.</summary>
    /// <exception cref="QueueConnectionException">The server cannot be reached or refused the credentials.</exception>
    public Task ConnectAsync(CancellationToken cancellationToken = default) => RunAsync(_ => Task.FromResult(true), cancellationToken);

    /// <summary>Enqueues persistent messages, in order, each confirmed by the broker; their ids follow the record's count of messages enqueued.</summary>
    /// <returns>How many messages were enqueued.</returns>
    public async Task<int> EnqueueAsync(IReadOnlyList<string> payloads, CancellationToken cancellationToken = default)
    {
        string[] all = LeaseQueueOptions.RequirePayloads(payloads);
        if (all.Length == 0)
        {
            return 0;
        }

        // Recorded first: a producer that dies half-way leaves fewer messages than the record says, a loss the counts show.
        long first = await WriteAsync(QueueRecord.Enqueued, all.Length, cancellationToken: cancellationToken).ConfigureAwait(false);
        bool sent = false;
        await RunAsync(
            async session =>
            {
                if (sent)
                {
                    throw _reconnector.Error("the connection was lost during an enqueue, which is not retried", null);
                }

                sent = true;
                var confirms = new Task[all.Length];
                for (int i = 0; i < confirms.Length; i++)
                {
                    var properties = new BasicProperties { Persistent = true, MessageId = (first + i).ToString(CultureInfo.InvariantCulture) };
                    confirms[i] = session.Publish.BasicPublishAsync("", QueueName, mandatory: true, properties, Encoding.UTF8.GetBytes(all[i]), cancellationToken).AsTask();
                }

                await Task.WhenAll(confirms).ConfigureAwait(false);
                return true;
            },
            cancellationToken).ConfigureAwait(false);
        return all.Length;
    }

    /// <summary>Takes the next message ready in the broker (<c>basic.get</c>), held by this object's connection until it is
    /// completed, abandoned or the connection is lost. A copy of a message the record shows completed is acknowledged and skipped.</summary>
    /// <param name="leaseDuration">How long the delivery is held without a renewal (1 ms to 1 day); then it is requeued.</param>
    /// <param name="cancellationToken">Abandons the wait for the reply.</param>
    /// <returns>The delivery, or <see langword="null"/> when the broker has no message ready.</returns>
    public async Task<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        LeaseQueueOptions.RequireLeaseDuration(leaseDuration);
        while (true)
        {
            (Session session, BasicGetResult? got) = await RunAsync(
                async session =>
                {
                    if (!session.Synced)
                    {
                        // Once per connection, the record is read up to now before anything is taken: a copy whose completion was
                        // recorded before a broker restart may come back without the redelivered flag (README, "Copies").
                        await AppliedAsync(session, await PublishAsync(session, QueueRecord.Sync, verdict: true).ConfigureAwait(false), cancellationToken).ConfigureAwait(false);
                        session.Synced = true;
                    }

                    return (session, await session.Messages.BasicGetAsync(QueueName, autoAck: false, cancellationToken).ConfigureAwait(false));
                },
                cancellationToken).ConfigureAwait(false);
            if (got is null)
            {
                return null;
            }

            long id = long.TryParse(got.BasicProperties.MessageId, CultureInfo.InvariantCulture, out long parsed) ? parsed : 0;
            long token = Interlocked.Increment(ref _lastToken);
            (bool completed, int deliveries) = _record.Of(id);
            try
            {
                Held held;
                if (got.Redelivered)
                {
                    // A flagged copy may be of a message completed a moment ago: its delivery is recorded first and the record
                    // decides (README, "Copies").
                    Task<long> verdict = await PublishAsync(session, QueueRecord.Delivered, id, token, flag: true, verdict: true).ConfigureAwait(false);
                    completed = await AppliedAsync(session, verdict, cancellationToken).ConfigureAwait(false) == 1;
                    deliveries = _record.Of(id).Deliveries - 1;
                    held = new Held(session, got.DeliveryTag, id, Task.CompletedTask, leaseDuration);
                }
                else
                {
                    // Not awaited here: the complete or abandon that follows waits for it, so that the record has them in order.
                    held = new Held(session, got.DeliveryTag, id, Background(PublishAsync(session, QueueRecord.Delivered, id, token)), leaseDuration);
                }

                _held[token] = held;
                CheckEvery(leaseDuration);
                if (completed)
                {
                    _held.TryRemove(token, out _);
                    await session.Messages.BasicAckAsync(got.DeliveryTag, multiple: false, cancellationToken).ConfigureAwait(false);
                    continue;
                }
            }
            catch (Exception e) when (IsConnectionLoss(e) && !cancellationToken.IsCancellationRequested)
            {
                Lose(session); // the broker gives the message to the next receive, flagged
                continue;
            }

            return new Lease(id, Encoding.UTF8.GetString(got.Body.Span), token, Math.Max(got.Redelivered ? 2 : 1, deliveries + 1), got.BasicProperties.Priority);
        }
    }

    /// <summary>
    /// Renews each lease without a request: true while its connection lives and it is neither completed, abandoned nor lapsed; its
    /// lease then runs <paramref name="leaseDuration"/> from now. A refusal (the broker redelivers the message, or has) is counted
    /// in the record.
    /// </summary>
    /// <returns>For each lease in order, whether it is still held: on <see langword="false"/> the caller must stop working on it.</returns>
    public Task<bool[]> RenewAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(leases);
        LeaseQueueOptions.RequireLeaseDuration(leaseDuration);
        bool[] renewed = new bool[leases.Count];
        for (int i = 0; i < renewed.Length; i++)
        {
            if (Current(leases[i], out Held? held))
            {
                lock (held)
                {
                    renewed[i] = !held.Lapsed;
                    held.Until = Stopwatch.GetTimestamp() + (long)(leaseDuration.TotalSeconds * Stopwatch.Frequency);
                }
            }

            if (!renewed[i])
            {
                Count(QueueRecord.RenewalRefused, leases[i]);
            }
        }

        return Task.FromResult(renewed);
    }

    /// <summary>
    /// Records the completion, then acknowledges. The record decides: the message's first recorded completion counts, any later
    /// one is refused, so a message completed by two deliveries (the first one's connection lost in between) counts once.
    /// Completing again with the delivery that completed it returns the same answer and counts nothing.
    /// </summary>
    /// <returns><see langword="true"/> if this completion counts; <see langword="false"/> if the delivery was no longer held, or
    /// another delivery's completion was recorded first (counted as rejected completes).</returns>
    public async Task<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        Task<bool>? completion = null;
        if (_held.TryGetValue(lease.Token, out Held? held) && held.Id == lease.MessageId)
        {
            lock (held)
            {
                completion = held.Completion is { IsFaulted: false, IsCanceled: false } done ? done
                    : !held.Session.Lost && !held.Lapsed ? held.Completion = CompleteHeldAsync(lease.Token, held, cancellationToken) : null;
            }
        }

        if (completion is null)
        {
            Count(QueueRecord.CompleteRefused, lease);
            return false;
        }

        return await completion.ConfigureAwait(false);
    }

    /// <summary>Records the abandon, then requeues the message (<c>basic.nack</c>): the next receive may take it, flagged redelivered.</summary>
    /// <returns><see langword="false"/> if the delivery was no longer held (nothing to hand back).</returns>
    public async Task<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(lease);
        return Current(lease, out Held held) && _held.TryRemove(lease.Token, out _)
            && await RequeueAsync(held, lease.Token, QueueRecord.Abandoned, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The record's counts, read up to a marker this call appends (every event recorded before the call is in them), and
    /// the broker's count of messages ready.</summary>
    public async Task<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default)
    {
        await Task.WhenAll(_background.Values).ConfigureAwait(false);
        await WriteAsync(QueueRecord.Sync, cancellationToken: cancellationToken).ConfigureAwait(false);
        uint ready = await RunAsync(
            async session => (await session.Messages.QueueDeclarePassiveAsync(QueueName, cancellationToken).ConfigureAwait(false)).MessageCount,
            cancellationToken).ConfigureAwait(false);
        return _record.Counts(ready);
    }

    /// <summary>Deletes the queue and its record and declares them again, empty: the counts start from zero.</summary>
    public async Task PurgeAsync(CancellationToken cancellationToken = default)
    {
        await DropAsync(cancellationToken).ConfigureAwait(false);
        await ConnectAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Deletes the queue and its record.</summary>
    public async Task DropAsync(CancellationToken cancellationToken = default)
    {
        Session gone = await RunAsync(
            async session =>
            {
                await session.Messages.QueueDeleteAsync(QueueName, cancellationToken: cancellationToken).ConfigureAwait(false);
                await session.Messages.QueueDeleteAsync(_recordName, cancellationToken: cancellationToken).ConfigureAwait(false);
                return session;
            },
            cancellationToken).ConfigureAwait(false);
        Lose(gone);
        _record.Reset();
    }

    /// <summary>Closes the connection; the deliveries it held go back to the queue.</summary>
    public async ValueTask DisposeAsync()
    {
        await _expiry.DisposeAsync().ConfigureAwait(false);
        if (_session is { } session)
        {
            Lose(session);
            await session.Connection.DisposeAsync().ConfigureAwait(false);
        }

        _record.Reset();
        _connecting.Dispose();
    }

    /// <summary>For the tests: the connection is lost as a network failure loses it (the broker requeues what it held).</summary>
    internal async Task AbortConnectionAsync()
    {
        if (_session is { } session)
        {
            Lose(session);
            await session.Connection.AbortAsync().ConfigureAwait(false);
        }
    }

    /// <summary>The record's instances (owner and suffix) that hold a delivery now (for the tests).</summary>
    internal string[] Holders() => _record.Holders();

    /// <summary>The record's name and one of its events, for a caller that writes them itself (the BrokerWorker's plain-client loop).</summary>
    internal string RecordName => _recordName;

    private async Task<bool> CompleteHeldAsync(long token, Held held, CancellationToken cancellationToken)
    {
        // Recorded after the delivery and before the acknowledgement: a copy whose acknowledgement is lost comes back and is
        // dropped (README, "Copies").
        await held.Recorded.ConfigureAwait(false);
        bool counts = await WriteAsync(QueueRecord.Completed, held.Id, token, cancellationToken: cancellationToken).ConfigureAwait(false) == 1;
        try
        {
            await held.Session.Messages.BasicAckAsync(held.Tag, multiple: false, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (IsConnectionLoss(e))
        {
            Lose(held.Session);
        }

        _completed.Enqueue(token);
        while (_completed.Count > KeptCompletions && _completed.TryDequeue(out long old))
        {
            _held.TryRemove(old, out _);
        }

        return counts;
    }

    /// <summary>Checks for lapsed leases at least every eighth of the shortest lease taken (5 ms to 1 s).</summary>
    private void CheckEvery(TimeSpan leaseDuration)
    {
        TimeSpan every = TimeSpan.FromTicks(Math.Clamp(leaseDuration.Ticks / 8, TimeSpan.TicksPerMillisecond * 5, TimeSpan.TicksPerSecond));
        lock (_expiry)
        {
            if (_checkEvery == Timeout.InfiniteTimeSpan || every < _checkEvery)
            {
                _checkEvery = every;
                _expiry.Change(every, every);
            }
        }
    }

    /// <summary>
    /// Requeues every delivery whose lease has run out, as a server's lease lapses (RabbitMQ: "Leases"): from then on its renewal,
    /// complete and abandon are refused, and its next delivery counts as an expired redelivery (the lapse is recorded, not an abandon:
    /// while the message waits at the broker it is counted ready, not leased).
    /// </summary>
    private void ExpireLapsed()
    {
        long now = Stopwatch.GetTimestamp();
        foreach (KeyValuePair<long, Held> entry in _held)
        {
            Held held = entry.Value;
            lock (held)
            {
                if (held.Until > now || held.Completion is not null || held.Lapsed || held.Session.Lost || !_held.TryRemove(entry.Key, out _))
                {
                    continue;
                }

                held.Lapsed = true;
            }

            Background(RequeueAsync(held, entry.Key, QueueRecord.Lapsed));
        }
    }

    /// <summary>Records an abandon or a lapse (<paramref name="kind"/>), then requeues the message (<c>basic.nack</c>).</summary>
    private async Task<bool> RequeueAsync(Held held, long token, char kind, CancellationToken cancellationToken = default)
    {
        try
        {
            await held.Recorded.ConfigureAwait(false); // the delivery is in the record before the message can be delivered again
            await PublishAsync(held.Session, kind, held.Id, token).ConfigureAwait(false); // and the abandon or lapse before the requeue
            await held.Session.Messages.BasicNackAsync(held.Tag, multiple: false, requeue: true, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (IsConnectionLoss(e))
        {
            Lose(held.Session); // requeued all the same: the broker requeues what a lost connection held
        }

        return true;
    }

    private bool Current(Lease lease, out Held held) =>
        _held.TryGetValue(lease.Token, out held!) && held.Id == lease.MessageId && !held.Session.Lost && held.Completion is null;

    /// <summary>Counts a refusal in the record, without making the caller wait for it.</summary>
    private void Count(char kind, Lease lease) => Background(WriteAsync(kind, lease.MessageId, lease.Token));

    /// <summary>An event its caller does not wait for: counts wait for it (a failure to record it is a connection lost, not an
    /// error of the caller's). The returned task never faults.</summary>
    private Task Background<T>(Task<T> write)
    {
        long key = Interlocked.Increment(ref _lastToken);
        Task done = write.ContinueWith(t => _background.TryRemove(key, out _) && t.Exception is null, TaskScheduler.Default);
        _background[key] = done;
        return done;
    }

    /// <summary>Appends an event to the record and waits until the reader has applied it (retried on a new connection: the record
    /// applies an event once, however often it was sent); returns its verdict.</summary>
    private async Task<long> WriteAsync(char kind, long a = 0, long b = 0, CancellationToken cancellationToken = default)
    {
        (long seq, byte[] body, Task<long>? verdict) = _record.Write(kind, a, b, verdict: true);
        try
        {
            return await RunAsync(
                async session =>
                {
                    await session.Publish.BasicPublishAsync("", _recordName, mandatory: true, s_persistent, body, cancellationToken).ConfigureAwait(false);
                    return await AppliedAsync(session, verdict!, cancellationToken).ConfigureAwait(false);
                },
                cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _record.Forget(seq);
        }
    }

    /// <summary>Appends an event on one connection, confirmed, not retried; returns the task of its verdict (with <paramref name="verdict"/>).</summary>
    private async Task<Task<long>> PublishAsync(Session session, char kind, long a = 0, long b = 0, bool flag = false, bool verdict = false)
    {
        (long seq, byte[] body, Task<long>? applied) = _record.Write(kind, a, b, flag, verdict);
        try
        {
            await session.Publish.BasicPublishAsync("", _recordName, mandatory: true, s_persistent, body).ConfigureAwait(false);
            return applied ?? Task.FromResult(0L);
        }
        catch
        {
            _record.Forget(seq);
            throw;
        }
    }

    /// <summary>Waits for the reader of <paramref name="session"/> to apply an event; throws as a lost connection when it is lost first.</summary>
    private static async Task<long> AppliedAsync(Session session, Task<long> verdict, CancellationToken cancellationToken)
    {
        while (!verdict.IsCompleted)
        {
            if (session.Lost)
            {
                throw new IOException("the connection was lost before the record was read back");
            }

            await Task.WhenAny(verdict, Task.Delay(50, cancellationToken)).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
        }

        return await verdict.ConfigureAwait(false);
    }

    /// <summary>
    /// Runs one operation on the connection, opening it first if needed. A lost connection is retried with back-off while the
    /// reconnect budget allows; the first connection only when the server accepts connections (a busy machine or server).
    /// </summary>
    private Task<T> RunAsync<T>(Func<Session, Task<T>> operation, CancellationToken cancellationToken) =>
        _reconnector.RunAsync(
            async () =>
            {
                Session session = await GetSessionAsync(cancellationToken).ConfigureAwait(false);
                try
                {
                    return await operation(session).ConfigureAwait(false);
                }
                catch (Exception e) when (IsConnectionLoss(e) && !cancellationToken.IsCancellationRequested)
                {
                    Lose(session);
                    throw new RetryableConnectionException(Reason(e), e, reconnecting: true);
                }
            },
            cancellationToken);

    /// <summary>The open session, or a new one; throws <see cref="RetryableConnectionException"/> when none opens but a retry may
    /// open one (a connection had been made before, or the server accepts connections).</summary>
    private async Task<Session> GetSessionAsync(CancellationToken cancellationToken)
    {
        if (_session is { Lost: false } current)
        {
            return current;
        }

        await _connecting.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_session is { Lost: false } opened)
            {
                return opened;
            }

            if (_session is { } old)
            {
                await old.Connection.DisposeAsync().ConfigureAwait(false);
                _reconnector.CountReconnect();
            }

            (IConnection? connection, string? why, Exception? failure, bool accepts) =
                await RabbitMqConnection.TryConnectAsync(_factory, _owner, cancellationToken).ConfigureAwait(false);
            if (connection is null)
            {
                throw _everConnected || accepts
                    ? new RetryableConnectionException(why!, failure, reconnecting: _everConnected)
                    : _reconnector.Error(why!, failure);
            }

            try
            {
                _session = await OpenAsync(connection, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
                if (_everConnected && IsConnectionLoss(e))
                {
                    // A node just restarted may refuse a queue whose home is not up yet (404 "home node ... is down"): retried.
                    throw new RetryableConnectionException(Reason(e), e, reconnecting: true);
                }

                throw;
            }

            _everConnected = true;
            return _session;
        }
        finally
        {
            _connecting.Release();
        }
    }

    // A channel for the messages (get, ack, nack), one for publishing with confirms, one reading the record from where the last
    // reader stopped. The first sign of a loss on any of them ends the session: its deliveries are refused from then on.
    private async Task<Session> OpenAsync(IConnection connection, CancellationToken cancellationToken)
    {
        IChannel messages = await connection.CreateChannelAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        IChannel publish = await connection.CreateChannelAsync(new CreateChannelOptions(true, true), cancellationToken).ConfigureAwait(false);
        IChannel reader = await connection.CreateChannelAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        await messages.QueueDeclareAsync(QueueName, durable: true, exclusive: false, autoDelete: false, cancellationToken: cancellationToken).ConfigureAwait(false);
        await messages.QueueDeclareAsync(_recordName, durable: true, exclusive: false, autoDelete: false, s_stream, cancellationToken: cancellationToken).ConfigureAwait(false);
        await reader.BasicQosAsync(0, 1000, global: false, cancellationToken).ConfigureAwait(false);
        var session = new Session(connection, messages, publish);
        AsyncEventHandler<ShutdownEventArgs> lost = (_, _) =>
        {
            Lose(session);
            return Task.CompletedTask;
        };
        connection.ConnectionShutdownAsync += lost;
        messages.ChannelShutdownAsync += lost;
        publish.ChannelShutdownAsync += lost;
        reader.ChannelShutdownAsync += lost;
        var from = new Dictionary<string, object?> { ["x-stream-offset"] = _record.NextOffset };
        await reader.BasicConsumeAsync(_recordName, autoAck: false, "", noLocal: false, exclusive: false, from, new RecordReader(this, session, reader, _record.Epoch), cancellationToken).ConfigureAwait(false);
        return session;
    }

    /// <summary>Ends a session: its deliveries are no longer held (the broker redelivers them once it sees the connection gone).</summary>
    private void Lose(Session session)
    {
        if (session.Lost)
        {
            return;
        }

        session.Lost = true;
        foreach (KeyValuePair<long, Held> entry in _held)
        {
            if (entry.Value.Session == session && entry.Value.Completion is null)
            {
                _held.TryRemove(entry.Key, out _);
            }
        }

        // A channel closed alone (a refused step) takes the connection with it, so that the next session starts whole.
        _ = Task.Run(() => session.Connection.AbortAsync());
    }

    private static bool IsConnectionLoss(Exception e) => e is RabbitMQClientException or IOException or SocketException or TimeoutException;

    private static string Reason(Exception e) => e switch
    {
        OperationInterruptedException { ShutdownReason: { } s } => $"the connection was closed ({s.ReplyCode} {s.ReplyText})",
        _ => e.Message.Split('\n', 2)[0].TrimEnd('.'),
    };

    private static readonly BasicProperties s_persistent = new() { Persistent = true };

    private static readonly Dictionary<string, object?> s_stream = new() { ["x-queue-type"] = "stream" };

    [GeneratedRegex("^[A-Za-z0-9_.-]{1,200}$", RegexOptions.CultureInvariant)]
    private static partial Regex QueueNamePattern();

    /// <summary>One connection and its channels; lost once, for good.</summary>
    private sealed class Session(IConnection connection, IChannel messages, IChannel publish)
    {
        public IConnection Connection { get; } = connection;

        public IChannel Messages { get; } = messages;

        public IChannel Publish { get; } = publish;

        public volatile bool Lost;

        public volatile bool Synced;
    }

    /// <summary>A delivery this object holds: its session and tag, its delivery's event, when its lease runs out, and once
    /// completed, the completion. <see cref="Until"/>, <see cref="Lapsed"/> and <see cref="Completion"/> change under its lock.</summary>
    private sealed class Held(Session session, ulong tag, long id, Task recorded, TimeSpan lease)
    {
        public Session Session { get; } = session;

        public ulong Tag { get; } = tag;

        public long Id { get; } = id;

        public Task Recorded { get; } = recorded;

        public Task<bool>? Completion { get; set; }

        public long Until { get; set; } = Stopwatch.GetTimestamp() + (long)(lease.TotalSeconds * Stopwatch.Frequency);

        public bool Lapsed { get; set; }
    }

    /// <summary>Reads the record into the fold, in the stream's order; a record deleted under it starts the fold again. It reads
    /// the stream of one epoch: after a purge, a reader still delivering from the deleted stream must not fold into the new one.</summary>
    private sealed class RecordReader(RabbitMqLeaseQueue queue, Session session, IChannel channel, long epoch) : AsyncDefaultBasicConsumer(channel)
    {
        public override async Task HandleBasicDeliverAsync(string consumerTag, ulong deliveryTag, bool redelivered, string exchange, string routingKey,
            IReadOnlyBasicProperties properties, ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default)
        {
            if (properties.Headers?["x-stream-offset"] is long offset)
            {
                queue._record.Apply(epoch, offset, body.Span);
            }

            await Channel.BasicAckAsync(deliveryTag, multiple: false, cancellationToken).ConfigureAwait(false);
        }

        public override Task HandleBasicCancelAsync(string consumerTag, CancellationToken cancellationToken = default)
        {
            if (!session.Lost)
            {
                queue.Lose(session);
                queue._record.Reset();
            }

            return base.HandleBasicCancelAsync(consumerTag, cancellationToken);
        }
    }
}
