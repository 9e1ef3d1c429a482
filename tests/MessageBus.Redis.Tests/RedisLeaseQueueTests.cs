using System.Collections.Concurrent;
using StackExchange.Redis;
using TestSupport;

namespace MessageBus.Redis.Tests;

/// <summary>The queue's scripts against a real Redis: each test has its own queue (its own keys), dropped at the end.</summary>
public sealed class RedisLeaseQueueTests : IAsyncLifetime
{
    private static readonly TimeSpan s_long = TimeSpan.FromMinutes(10);
    private static readonly TimeSpan s_short = TimeSpan.FromMilliseconds(300);
    private readonly List<RedisLeaseQueue> _queues = new();

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_queues.Count > 0)
        {
            await _queues[0].DropAsync();
        }

        foreach (RedisLeaseQueue queue in _queues)
        {
            await queue.DisposeAsync();
        }
    }

    [RedisFact]
    public async Task ReceiveAsync_EmptyQueue_ReturnsNull()
    {
        RedisLeaseQueue queue = await NewQueueAsync();

        (await queue.ReceiveAsync(s_long)).Should().BeNull();
    }

    [RedisFact]
    public async Task ReceiveAsync_Messages_DeliversOldestFirstWithIncreasingTokensAndTheServersLeaseEnd()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["a", "b", "c"]);
        await using ConnectionMultiplexer admin = await TestServer.ConnectAdminAsync();
        long before = await TestServer.ServerNowAsync(admin.GetDatabase());

        Lease first = (await queue.ReceiveAsync(s_long))!;
        Lease second = (await queue.ReceiveAsync(s_long))!;

        (first.Payload, second.Payload).Should().Be(("a", "b"));
        second.Token.Should().BeGreaterThan(first.Token);
        (first.DeliveryCount, second.DeliveryCount).Should().Be((1, 1));
        first.LeaseUntil!.Value.ToUnixTimeMilliseconds().Should().BeGreaterThanOrEqualTo(before + (long)s_long.TotalMilliseconds, "the lease ends a lease after the server's now");
        BusCounts counts = await queue.GetCountsAsync();
        (counts.Enqueued, counts.Delivered, counts.Leased, counts.Available).Should().Be((3, 2, 2, 1));
    }

    [RedisFact]
    public async Task ReceiveAsync_ConcurrentReceiversOnSeparateConnections_NeverGetTheSameMessage()
    {
        const int Messages = 400;
        RedisLeaseQueueOptions options = TestServer.NewOptions();
        RedisLeaseQueue producer = Track(await TestServer.CreateQueueAsync(options));
        await producer.EnqueueAsync([.. Enumerable.Range(0, Messages).Select(i => i.ToString(System.Globalization.CultureInfo.InvariantCulture))]);
        RedisLeaseQueue[] receivers = [.. Enumerable.Range(0, 8).Select(i => Track(new RedisLeaseQueue(TestServer.NewOptions(options.QueueName, $"receiver-{i}"))))];
        ConcurrentBag<Lease> taken = new();
        using Barrier start = new(receivers.Length);

        Task[] loops = [.. receivers.Select(r => Task.Run(async () =>
        {
            start.SignalAndWait(TestServer.Patience);
            while (await r.ReceiveAsync(s_long) is { } lease)
            {
                taken.Add(lease);
            }
        }))];
        await Task.WhenAll(loops).WaitAsync(TestServer.Patience);

        taken.Select(l => l.MessageId).Should().OnlyHaveUniqueItems().And.HaveCount(Messages);
        taken.Select(l => l.Token).Should().OnlyHaveUniqueItems();
        BusCounts counts = await producer.GetCountsAsync();
        (counts.Delivered, counts.Redelivered, counts.Leased, counts.Available).Should().Be((Messages, 0, Messages, 0));
    }

    [RedisFact]
    public async Task CheckStalledAsync_LockExpiredByTheServersClock_RequeuesFirstInLine_RedeliveredWithANewTokenAndCounted()
    {
        RedisLeaseQueue first = await NewQueueAsync(owner: "first");
        RedisLeaseQueue second = await SameQueueAsync(first, owner: "second");
        await first.EnqueueAsync(["m", "next"]);
        Lease lease = (await first.ReceiveAsync(s_short))!;

        await TestServer.WaitForServerClockPastAsync(lease.LeaseUntil!.Value);
        (await second.ReceiveAsync(s_long))!.Payload.Should().Be("next", "an expired lock stays in the active list until the stalled check");
        (await second.CheckStalledAsync()).Should().Be(1);
        Lease again = (await second.ReceiveAsync(s_long))!;

        again.MessageId.Should().Be(lease.MessageId);
        again.DeliveryCount.Should().Be(2);
        again.Token.Should().BeGreaterThan(lease.Token);
        BusCounts counts = await first.GetCountsAsync();
        (counts.Delivered, counts.Redelivered, counts.ExpiredRedeliveries, counts.Leased, counts.Available).Should().Be((3, 1, 1, 2, 0));
    }

    [RedisFact]
    public async Task CheckStalledAsync_LockCurrent_MovesNothing()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m"]);
        await queue.ReceiveAsync(s_long);

        (await queue.CheckStalledAsync()).Should().Be(0);
        (await queue.ReceiveAsync(s_long)).Should().BeNull();
    }

    [RedisFact]
    public async Task PeriodicStalledCheck_ExpiredLease_IsRedeliveredWithoutAnyoneCallingTheCheck()
    {
        RedisLeaseQueueOptions options = TestServer.NewOptions(stalledCheckInterval: TimeSpan.FromMilliseconds(50));
        RedisLeaseQueue queue = Track(await TestServer.CreateQueueAsync(options));
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(s_short))!; // the first receive starts the periodic check

        using CancellationTokenSource timeout = new(TestServer.Patience);
        Lease? again;
        while ((again = await queue.ReceiveAsync(s_long)) is null)
        {
            await Task.Delay(10, timeout.Token);
        }

        again.MessageId.Should().Be(lease.MessageId);
        (await queue.GetCountsAsync()).ExpiredRedeliveries.Should().Be(1, "the server counts the redelivery of a message the stalled check moved back");
    }

    [RedisFact]
    public async Task RenewAsync_CurrentToken_MovesTheLeaseOnByTheServersClock()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(s_long))!;
        await using ConnectionMultiplexer admin = await TestServer.ConnectAdminAsync();

        (await queue.RenewAsync(lease, s_long * 2)).Should().BeTrue();

        long ttl = (long)await admin.GetDatabase().ExecuteAsync("PTTL", $"{{{queue.QueueName}}}:lock:{lease.MessageId}");
        ttl.Should().BeGreaterThan((long)s_long.TotalMilliseconds, "the server's lock now expires after the longer lease");
        (await queue.CompleteAsync(lease)).Should().BeTrue();
    }

    [RedisFact]
    public async Task RenewAsync_LeaseExpiredButNotRetaken_FailsAndIsCounted()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(s_short))!;

        await TestServer.WaitForServerClockPastAsync(lease.LeaseUntil!.Value);

        (await queue.RenewAsync(lease, s_long)).Should().BeFalse("the server's clock decides: the lock is gone");
        (await queue.GetCountsAsync()).FailedRenewals.Should().Be(1);
    }

    [RedisFact]
    public async Task RenewAsync_Batch_RenewsTheCurrentLeasesAndRefusesAndCountsEachStaleOne()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["a", "b", "c", "d"]);
        Lease a = (await queue.ReceiveAsync(s_short))!;
        Lease b = (await queue.ReceiveAsync(s_long))!;
        Lease c = (await queue.ReceiveAsync(s_long))!;
        Lease d = (await queue.ReceiveAsync(s_long))!;
        (await queue.CompleteAsync(c)).Should().BeTrue();
        await TestServer.WaitForServerClockPastAsync(a.LeaseUntil!.Value);

        bool[] renewed = await queue.RenewAsync([a, b, c, d with { Token = d.Token + 1000 }], s_long);

        renewed.Should().Equal(false, true, false, false);
        BusCounts counts = await queue.GetCountsAsync();
        counts.FailedRenewals.Should().Be(3, "an expired lease, a completed message and a wrong token, each refused on its own");
        (await queue.CompleteAsync(b)).Should().BeTrue();
        (await queue.CompleteAsync(d)).Should().BeTrue("the stale token's refusal left the current lease alone");
    }

    [RedisFact]
    public async Task StaleToken_AfterRedelivery_CannotRenewCompleteOrAbandon()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m"]);
        Lease stale = (await queue.ReceiveAsync(s_short))!;
        await TestServer.WaitForServerClockPastAsync(stale.LeaseUntil!.Value);
        await queue.CheckStalledAsync();
        Lease current = (await queue.ReceiveAsync(s_long))!;

        (await queue.RenewAsync(stale, s_long)).Should().BeFalse();
        (await queue.CompleteAsync(stale)).Should().BeFalse();
        (await queue.AbandonAsync(stale)).Should().BeFalse();

        (await queue.RenewAsync(current, s_long)).Should().BeTrue("the current holder's lock is untouched");
        (await queue.CompleteAsync(current)).Should().BeTrue();
        BusCounts counts = await queue.GetCountsAsync();
        (counts.FailedRenewals, counts.RejectedCompletes, counts.Abandoned, counts.Completed).Should().Be((1, 1, 0, 1));
    }

    [RedisFact]
    public async Task CompleteAsync_CurrentToken_CompletesOnce_ARetryWithTheSameTokenSucceedsAndCountsNothing()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(s_long))!;

        (await queue.CompleteAsync(lease)).Should().BeTrue();
        (await queue.CompleteAsync(lease with { })).Should().BeTrue("a retried complete whose reply was lost");
        (await queue.CheckStalledAsync()).Should().Be(0, "a completed message is in no list");

        (await queue.ReceiveAsync(s_long)).Should().BeNull();
        (await queue.GetCountsAsync()).Should().Be(new BusCounts(Enqueued: 1, Delivered: 1, Redelivered: 0, Completed: 1, RejectedCompletes: 0,
            FailedRenewals: 0, Abandoned: 0, Leased: 0, Available: 0, ExpiredRedeliveries: 0));
    }

    [RedisFact]
    public async Task CompleteAsync_LeaseExpiredEvenIfNotRetaken_IsRejectedAndCounted()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(s_short))!;

        await TestServer.WaitForServerClockPastAsync(lease.LeaseUntil!.Value);

        (await queue.CompleteAsync(lease)).Should().BeFalse();
        BusCounts counts = await queue.GetCountsAsync();
        (counts.RejectedCompletes, counts.Completed).Should().Be((1, 0));
    }

    [RedisFact]
    public async Task AbandonAsync_CurrentLease_ReleasesAtOnceFirstInLine_ARetrySucceedsAndCountsNothing()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["m", "other"]);
        Lease lease = (await queue.ReceiveAsync(s_long))!;

        (await queue.AbandonAsync(lease)).Should().BeTrue();
        (await queue.AbandonAsync(lease with { })).Should().BeTrue("a retried abandon whose reply was lost");
        Lease again = (await queue.ReceiveAsync(s_long))!;

        again.MessageId.Should().Be(lease.MessageId, "an abandoned message is next in line");
        again.DeliveryCount.Should().Be(2);
        (await queue.CompleteAsync(lease)).Should().BeFalse("the abandoned token is stale");
        BusCounts counts = await queue.GetCountsAsync();
        (counts.Abandoned, counts.Redelivered, counts.ExpiredRedeliveries).Should().Be((1, 1, 0));
    }

    [RedisFact]
    public async Task GetCountsAsync_MixedOutcomes_AddUp_AndPurgeStartsAgainWithTokensStillIncreasing()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync([.. Enumerable.Range(0, 6).Select(i => $"m{i}")]);
        Lease completed = (await queue.ReceiveAsync(s_long))!;
        Lease abandoned = (await queue.ReceiveAsync(s_long))!;
        Lease expired = (await queue.ReceiveAsync(s_short))!;
        Lease held = (await queue.ReceiveAsync(s_long))!;
        await queue.CompleteAsync(completed);
        await queue.AbandonAsync(abandoned);
        await TestServer.WaitForServerClockPastAsync(expired.LeaseUntil!.Value);
        await queue.CheckStalledAsync();

        BusCounts counts = await queue.GetCountsAsync();

        counts.Should().Be(new BusCounts(Enqueued: 6, Delivered: 4, Redelivered: 0, Completed: 1, RejectedCompletes: 0, FailedRenewals: 0,
            Abandoned: 1, Leased: 1, Available: 4, ExpiredRedeliveries: 0));
        (counts.Completed + counts.Available + counts.Leased).Should().Be(counts.Enqueued);
        held.Should().NotBeNull();

        await queue.PurgeAsync();
        (await queue.GetCountsAsync()).Should().Be(new BusCounts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        await queue.EnqueueAsync(["after"]);
        (await queue.ReceiveAsync(s_long))!.Token.Should().BeGreaterThan(held.Token, "the token counter survives a purge, so old tokens stay stale");
    }

    [RedisFact]
    public async Task EnqueueAsync_MoreThanOneScriptsWorth_KeepsTheOrder()
    {
        RedisLeaseQueue queue = await NewQueueAsync();

        (await queue.EnqueueAsync([.. Enumerable.Range(0, 1203).Select(i => $"m{i}")])).Should().Be(1203);

        var payloads = new List<string>();
        while (await queue.ReceiveAsync(s_long) is { } lease)
        {
            payloads.Add(lease.Payload);
        }

        payloads.Should().Equal(Enumerable.Range(0, 1203).Select(i => $"m{i}"));
    }

    [RedisFact]
    public async Task Operations_EveryClientConnectionKilledByTheServer_ReconnectAndGoOn()
    {
        RedisLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(["a", "b"]);
        Lease a = (await queue.ReceiveAsync(s_long))!;
        await using ConnectionMultiplexer admin = await TestServer.ConnectAdminAsync();

        // CLIENT KILL of every normal client but the admin's own: the queue's connection among them.
        long killed = (long)await admin.GetDatabase().ExecuteAsync("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");

        killed.Should().BeGreaterThan(0);
        (await queue.RenewAsync(a, s_long).WaitAsync(TestServer.Patience)).Should().BeTrue();
        (await queue.CompleteAsync(a).WaitAsync(TestServer.Patience)).Should().BeTrue();
        (await queue.ReceiveAsync(s_long).WaitAsync(TestServer.Patience))!.Payload.Should().Be("b");
    }

    [RedisFact]
    public async Task ConnectAsync_WrongPassword_NamesHostAndPortButNotThePassword_NotRetried()
    {
        (string host, int port) = TestServer.HostAndPort;
        await using RedisLeaseQueue queue = new(new RedisLeaseQueueOptions { ConnectionString = $"{host}:{port},password=not-the-password-42" });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.ConnectAsync()).Should()
            .ThrowAsync<QueueConnectionException>().WaitAsync(TestServer.Patience)).Which;

        e.Message.Should().Be($"Cannot connect to Redis at {host}:{port}: the server refused the credentials (WRONGPASS invalid username-password pair or user is disabled.)");
        e.ToString().Should().NotContain("not-the-password-42");
        queue.Reconnects.Should().Be(0);
    }

    [RedisFact]
    public async Task ConnectAsync_NoPasswordWhileTheServerAsksForOne_NamesTheRefusal()
    {
        (string host, int port) = TestServer.HostAndPort;
        await using RedisLeaseQueue queue = new(new RedisLeaseQueueOptions { ConnectionString = $"{host}:{port}" });

        (await FluentActions.Awaiting(() => queue.ConnectAsync()).Should().ThrowAsync<QueueConnectionException>().WaitAsync(TestServer.Patience))
            .Which.Message.Should().StartWith($"Cannot connect to Redis at {host}:{port}: the server refused the credentials (NOAUTH");
    }

    [Theory]
    [InlineData("127.0.0.1:6379,password=hunter2secret,nosuchkeyword=1")]
    [InlineData("127.0.0.1:6379,password=hunter2secret,connectTimeout=soon")]
    [InlineData("password=hunter2secret")]
    [InlineData("127.0.0.1:6379,127.0.0.2:6379,password=hunter2secret")]
    public void Constructor_MalformedConnectionString_RejectedBeforeConnectingWithoutEchoingIt(string connectionString)
    {
        ArgumentException e = FluentActions.Invoking(() => new RedisLeaseQueue(new RedisLeaseQueueOptions { ConnectionString = connectionString }))
            .Should().Throw<ArgumentException>().Which;

        e.Message.Should().StartWith("The Redis connection string").And.NotContain("hunter2secret");
        e.Message.Split('\n').Should().ContainSingle();
        FluentActions.Invoking(() => RedisLeaseQueue.ValidateConnectionString(connectionString)).Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("  ")]
    public void Constructor_NoConnectionString_Throws(string? connectionString) =>
        FluentActions.Invoking(() => new RedisLeaseQueue(new RedisLeaseQueueOptions { ConnectionString = connectionString }))
            .Should().Throw<ArgumentException>().WithMessage("The Redis connection string is empty*");

    [Theory]
    [InlineData("")]
    [InlineData("with space")]
    [InlineData("{tag}")]
    public void Constructor_InvalidQueueName_ThrowsNamingTheValue(string name) =>
        FluentActions.Invoking(() => new RedisLeaseQueue(new RedisLeaseQueueOptions { ConnectionString = "127.0.0.1:6379", QueueName = name }))
            .Should().Throw<ArgumentException>().WithMessage($"QueueName '{name}' is not valid*");

    [Fact]
    public async Task ReceiveAsync_LeaseDurationOutOfRange_ThrowsBeforeConnecting()
    {
        await using RedisLeaseQueue queue = new(new RedisLeaseQueueOptions { ConnectionString = $"127.0.0.1:{FreePort()}" });

        await FluentActions.Awaiting(() => queue.ReceiveAsync(TimeSpan.Zero)).Should().ThrowAsync<ArgumentOutOfRangeException>();
        await FluentActions.Awaiting(() => queue.ReceiveAsync(TimeSpan.FromDays(2))).Should().ThrowAsync<ArgumentOutOfRangeException>();
    }

    [Theory]
    [InlineData("refused")]
    [InlineData("unknown host")]
    public async Task ConnectAsync_NothingListening_FailsAtOnceNamingHostAndPort(string how)
    {
        string host = how == "refused" ? "127.0.0.1" : "no-such-host.invalid";
        int port = how == "refused" ? FreePort() : 6379;
        await using RedisLeaseQueue queue = new(new RedisLeaseQueueOptions { ConnectionString = $"{host}:{port},password=hunter2secret" });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.ConnectAsync()).Should()
            .ThrowAsync<QueueConnectionException>().WaitAsync(TestServer.Patience)).Which;

        e.Message.Should().StartWith($"Cannot connect to Redis at {host}:{port}: no connection: ").And.NotContain("hunter2secret");
        e.Message.Split('\n').Should().ContainSingle();
        e.ToString().Should().NotContain("hunter2secret");
        e.Endpoint.Should().Be($"{host}:{port}");
    }

    [Fact]
    public async Task ConnectAsync_ServerNeverAnswers_NoRetrying_FailsAfterTheConnectTimeoutSayingWhy()
    {
        (QueueConnectionException e, long reconnects, int port) = await ConnectToSilentListenerAsync(TimeSpan.FromSeconds(1), reconnectTimeout: TimeSpan.Zero);

        e.Message.Should().Be($"Cannot connect to Redis at 127.0.0.1:{port}: the server accepts connections but the Redis handshake did not " +
            "finish within the connect timeout (1000 ms): a busy machine or server, or not a Redis server");
        reconnects.Should().Be(0);
    }

    [Fact]
    public async Task ConnectAsync_ServerNeverAnswers_RetriesWithinTheReconnectTimeoutThenSaysSo()
    {
        (QueueConnectionException e, long reconnects, int port) = await ConnectToSilentListenerAsync(TimeSpan.FromMilliseconds(500), reconnectTimeout: TimeSpan.FromSeconds(2));

        e.Message.Should().MatchRegex(
            $@"^Cannot connect to Redis at 127\.0\.0\.1:{port}: the server accepts connections but the Redis handshake did not finish within " +
            @"the connect timeout \(500 ms\): a busy machine or server, or not a Redis server \(still failing after retrying for [0-9.]+ s\)$");
        reconnects.Should().BeGreaterThan(0, "a busy handshake is retried, as a lost connection is");
    }

    /// <summary>Connects a queue to a port that accepts connections and never says a word: only the timeouts can end it.</summary>
    private static async Task<(QueueConnectionException Error, long Reconnects, int Port)> ConnectToSilentListenerAsync(TimeSpan connectTimeout, TimeSpan reconnectTimeout)
    {
        using System.Net.Sockets.TcpListener silent = new(System.Net.IPAddress.Loopback, 0);
        silent.Start();
        int port = ((System.Net.IPEndPoint)silent.LocalEndpoint).Port;
        await using RedisLeaseQueue queue = new(new RedisLeaseQueueOptions
        {
            ConnectionString = $"127.0.0.1:{port},password=hunter2secret",
            ConnectTimeout = connectTimeout,
            ReconnectTimeout = reconnectTimeout,
        });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.ConnectAsync()).Should()
            .ThrowAsync<QueueConnectionException>().WaitAsync(TestServer.Patience)).Which;
        e.Message.Should().NotContain("hunter2secret");
        return (e, queue.Reconnects, port);
    }

    [Fact]
    public async Task ConnectAsync_ServerClosesEachConnection_NoRetrying_FailsAtOnceSayingWhy()
    {
        // StackExchange.Redis reports this as it reports a connection it abandoned while a busy machine was still setting it up: with
        // no reason. The queue names what it can see, a server that accepts connections, and retries it when allowed (next tests).
        await using var closing = new HoldingThenForwardingProxy(server: null, closeAtOnce: true);
        await using RedisLeaseQueue queue = new(new RedisLeaseQueueOptions
        {
            ConnectionString = $"127.0.0.1:{closing.Port},password=hunter2secret",
            ReconnectTimeout = TimeSpan.Zero,
        });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.ConnectAsync()).Should()
            .ThrowAsync<QueueConnectionException>().WaitAsync(TestServer.Patience)).Which;

        e.Message.Should().MatchRegex(
            $@"^Cannot connect to Redis at 127\.0\.0\.1:{closing.Port}: the server accepts connections but the Redis connection failed after " +
            @"[0-9]+ ms: a busy machine, a server at its client limit, or not a Redis server$");
        e.Message.Should().NotContain("hunter2secret");
        queue.Reconnects.Should().Be(0);
        closing.Held.Should().BeGreaterThan(0);
    }

    [RedisFact]
    public Task ConnectAsync_FirstHandshakesNeverAnswered_RetriesAndConnects() => FirstConnectionsNotServed_RetriesAndConnectsAsync(closeAtOnce: false);

    [RedisFact]
    public Task ConnectAsync_FirstConnectionsClosedAtOnce_RetriesAndConnects() => FirstConnectionsNotServed_RetriesAndConnectsAsync(closeAtOnce: true);

    private static async Task FirstConnectionsNotServed_RetriesAndConnectsAsync(bool closeAtOnce)
    {
        // The first connections are held silent (a server, or a process starting on a machine, too busy to finish the handshake in
        // time) or closed at once (a server at its client limit; or, as StackExchange.Redis reports it, a connection it gave up while
        // still setting it up); once the queue has scheduled a retry, connections reach the real server. The retry connects.
        await using var proxy = new HoldingThenForwardingProxy(TestServer.HostAndPort, closeAtOnce);
        string password = ConfigurationOptions.Parse(TestServer.ConnectionString).Password ?? "";
        RedisLeaseQueueOptions options = TestServer.NewOptions();
        options.ConnectionString = $"127.0.0.1:{proxy.Port}{(password.Length > 0 ? $",password={password}" : "")}";
        options.ConnectTimeout = TimeSpan.FromMilliseconds(500);
        await using RedisLeaseQueue queue = new(options); // disposed before the proxy it talks through

        Task connect = queue.ConnectAsync();
        await proxy.ForwardOnceRetriedAsync(() => queue.Reconnects > 0, connect, TestServer.Patience);
        await connect.WaitAsync(TestServer.Patience);

        queue.Reconnects.Should().BeGreaterThan(0);
        proxy.Held.Should().BeGreaterThan(0, "the first attempt was not served");
        (await queue.EnqueueAsync(["a"])).Should().Be(1);
        (await queue.GetCountsAsync()).Enqueued.Should().Be(1);
        await queue.DropAsync();
    }

    internal static int FreePort()
    {
        using System.Net.Sockets.TcpListener listener = new(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }

    private RedisLeaseQueue Track(RedisLeaseQueue queue)
    {
        _queues.Add(queue);
        return queue;
    }

    private async Task<RedisLeaseQueue> NewQueueAsync(string owner = "test") =>
        Track(await TestServer.CreateQueueAsync(TestServer.NewOptions(owner: owner)));

    private async Task<RedisLeaseQueue> SameQueueAsync(RedisLeaseQueue other, string owner) =>
        Track(await TestServer.CreateQueueAsync(TestServer.NewOptions(other.QueueName, owner)));
}
