using System.Collections.Concurrent;
using Npgsql;
using TestSupport;

namespace MessageBus.Postgres.Tests;

/// <summary>The queue's statements against a real PostgreSQL: each test has its own table, dropped at the end.</summary>
public sealed class PostgresLeaseQueueTests : IAsyncLifetime
{
    private static readonly TimeSpan s_long = TimeSpan.FromMinutes(10);
    private static readonly TimeSpan s_short = TimeSpan.FromMilliseconds(300);
    private readonly List<PostgresLeaseQueue> _queues = new();

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_queues.Count > 0)
        {
            await _queues[0].DropAsync();
        }

        foreach (PostgresLeaseQueue queue in _queues)
        {
            await queue.DisposeAsync();
        }
    }

    [PostgresFact]
    public async Task EnsureSchemaAsync_ManyProcessesAtOnceAndAgain_Succeeds()
    {
        PostgresLeaseQueueOptions options = TestDatabase.NewOptions();
        PostgresLeaseQueue[] queues = Enumerable.Range(0, 6).Select(_ => Track(new PostgresLeaseQueue(options))).ToArray();

        await Task.WhenAll(queues.Select(q => q.EnsureSchemaAsync()));
        await queues[0].EnsureSchemaAsync();

        (await queues[0].GetCountsAsync()).Should().Be(new BusCounts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }

    [PostgresFact]
    public async Task ReceiveAsync_EmptyQueue_ReturnsNull()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();

        (await queue.ReceiveAsync(s_long)).Should().BeNull();
    }

    [PostgresFact]
    public async Task ReceiveAsync_Messages_DeliversOldestFirstWithIncreasingTokens()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "a", "b", "c" });

        List<Lease> leases = new();
        for (int i = 0; i < 3; i++)
        {
            leases.Add((await queue.ReceiveAsync(s_long))!);
        }

        leases.Select(l => l.Payload).Should().Equal("a", "b", "c");
        leases.Select(l => l.Token).Should().BeInAscendingOrder().And.OnlyHaveUniqueItems();
        leases.Should().OnlyContain(l => l.DeliveryCount == 1 && l.Priority == 0 && l.LeaseUntil > DateTimeOffset.UnixEpoch);
        (await ScalarAsync<long>($"SELECT count(*) FROM {queue.QueueName} WHERE lease_owner = 'test'")).Should().Be(3, "each delivery records its owner");
        (await queue.ReceiveAsync(s_long)).Should().BeNull("every message is under a current lease");
        BusCounts counts = await queue.GetCountsAsync();
        counts.Should().Be(new BusCounts(Enqueued: 3, Delivered: 3, Redelivered: 0, Completed: 0, RejectedCompletes: 0,
            FailedRenewals: 0, Abandoned: 0, Leased: 3, Available: 0, ExpiredRedeliveries: 0));
    }

    [PostgresFact]
    public async Task ReceiveAsync_ConcurrentReceiversInSeparatePools_NeverGetTheSameMessage()
    {
        const int Messages = 400;
        PostgresLeaseQueueOptions options = TestDatabase.NewOptions();
        PostgresLeaseQueue producer = Track(await TestDatabase.CreateQueueAsync(options));
        await producer.EnqueueAsync([.. Enumerable.Range(0, Messages).Select(i => i.ToString(System.Globalization.CultureInfo.InvariantCulture))]);
        PostgresLeaseQueue[] receivers = Enumerable.Range(0, 8)
            .Select(i => Track(new PostgresLeaseQueue(new PostgresLeaseQueueOptions
            {
                ConnectionString = options.ConnectionString,
                QueueName = options.QueueName,
                Owner = $"receiver-{i}",
            })))
            .ToArray();
        ConcurrentBag<Lease> taken = new();
        using Barrier start = new(receivers.Length);

        // Each receiver on its own thread and its own connection pool, released together, drains the queue.
        Task[] loops = receivers.Select(r => Task.Run(async () =>
        {
            start.SignalAndWait(TestDatabase.Patience);
            while (await r.ReceiveAsync(s_long) is { } lease)
            {
                taken.Add(lease);
            }
        })).ToArray();
        await Task.WhenAll(loops).WaitAsync(TestDatabase.Patience);

        taken.Select(l => l.MessageId).Should().OnlyHaveUniqueItems().And.HaveCount(Messages);
        taken.Select(l => l.Token).Should().OnlyHaveUniqueItems();
        BusCounts counts = await producer.GetCountsAsync();
        counts.Delivered.Should().Be(Messages);
        counts.Redelivered.Should().Be(0);
        counts.Leased.Should().Be(Messages);
    }

    [PostgresFact]
    public async Task ReceiveAsync_LeaseExpiredByDatabaseClock_RedeliversWithNewTokenAndCountsIt()
    {
        PostgresLeaseQueue first = await NewQueueAsync(owner: "first");
        PostgresLeaseQueue second = await SameQueueAsync(first, owner: "second");
        await first.EnqueueAsync(new[] { "m" });
        Lease lease = (await first.ReceiveAsync(s_short))!;

        await TestDatabase.WaitForDatabaseClockPastAsync(lease.LeaseUntil!.Value);
        Lease again = (await second.ReceiveAsync(s_long))!;

        again.MessageId.Should().Be(lease.MessageId);
        again.DeliveryCount.Should().Be(2);
        again.Token.Should().BeGreaterThan(lease.Token);
        (await ScalarAsync<string>($"SELECT lease_owner FROM {first.QueueName} WHERE id = {again.MessageId}")).Should().Be("second");
        BusCounts counts = await first.GetCountsAsync();
        counts.Delivered.Should().Be(2);
        counts.Redelivered.Should().Be(1);
        counts.ExpiredRedeliveries.Should().Be(1);
        counts.Leased.Should().Be(1);
    }

    [PostgresFact]
    public async Task ReceiveAsync_LeaseNotExpired_DoesNotRedeliver()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "m" });
        Lease lease = (await queue.ReceiveAsync(s_long))!;

        // The lease is ten minutes long: however slow this machine, it is current by the database's clock.
        (await queue.ReceiveAsync(s_long)).Should().BeNull();
        (await queue.CompleteAsync(lease)).Should().BeTrue();
    }

    [PostgresFact]
    public async Task RenewAsync_CurrentToken_MovesTheLeaseOnByTheDatabaseClock()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "m" });
        Lease lease = (await queue.ReceiveAsync(TimeSpan.FromSeconds(30)))!;
        DateTimeOffset before = lease.LeaseUntil!.Value;

        (await queue.RenewAsync(lease, TimeSpan.FromMinutes(5))).Should().BeTrue();

        (await ScalarAsync<DateTime>($"SELECT lease_until FROM {queue.QueueName} WHERE id = {lease.MessageId}")).Should().BeAfter(before.UtcDateTime.AddMinutes(4));
        (await queue.GetCountsAsync()).FailedRenewals.Should().Be(0);
    }

    [PostgresFact]
    public async Task RenewAsync_LeaseExpiredButNotRetaken_FailsAndIsCounted()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "m" });
        Lease lease = (await queue.ReceiveAsync(s_short))!;
        DateTimeOffset until = lease.LeaseUntil!.Value;
        await TestDatabase.WaitForDatabaseClockPastAsync(until);

        (await queue.RenewAsync(lease, s_long)).Should().BeFalse("expiry is judged by the database's clock, and it has passed");

        BusCounts counts = await queue.GetCountsAsync();
        counts.FailedRenewals.Should().Be(1);
        (await queue.ReceiveAsync(s_long))!.DeliveryCount.Should().Be(2, "a failed renewal does not revive the lease");
    }

    [PostgresFact]
    public async Task RenewAsync_Batch_RenewsTheCurrentLeasesAndRefusesAndCountsEachStaleOne()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "a", "b", "c", "d" });
        Lease a = (await queue.ReceiveAsync(s_short))!;
        Lease b = (await queue.ReceiveAsync(s_long))!;
        Lease c = (await queue.ReceiveAsync(s_long))!;
        Lease d = (await queue.ReceiveAsync(s_long))!;
        (await queue.CompleteAsync(c)).Should().BeTrue();
        await TestDatabase.WaitForDatabaseClockPastAsync(a.LeaseUntil!.Value);

        bool[] renewed = await queue.RenewAsync([a, b, c, d with { Token = d.Token + 1000 }, a with { MessageId = -1, Token = 1 }], s_long);

        renewed.Should().Equal(false, true, false, false, false);
        (await queue.GetCountsAsync()).FailedRenewals.Should().Be(3, "an expired lease, a completed message and a wrong token, each refused on its own");
        (await queue.CompleteAsync(b)).Should().BeTrue();
        (await queue.CompleteAsync(d)).Should().BeTrue("the stale token's refusal left the current lease alone");
    }

    [PostgresFact]
    public async Task StaleToken_AfterRedelivery_CannotRenewCompleteOrAbandon()
    {
        PostgresLeaseQueue zombie = await NewQueueAsync(owner: "zombie");
        PostgresLeaseQueue successor = await SameQueueAsync(zombie, owner: "successor");
        await zombie.EnqueueAsync(new[] { "m" });
        Lease stale = (await zombie.ReceiveAsync(s_short))!;
        await TestDatabase.WaitForDatabaseClockPastAsync(stale.LeaseUntil!.Value);
        Lease current = (await successor.ReceiveAsync(s_long))!;

        (await zombie.RenewAsync(stale, s_long)).Should().BeFalse();
        (await zombie.AbandonAsync(stale)).Should().BeFalse();
        (await zombie.CompleteAsync(stale)).Should().BeFalse();
        (await successor.RenewAsync(current, s_long)).Should().BeTrue("the stale holder's attempts changed nothing");
        (await successor.CompleteAsync(current)).Should().BeTrue();
        (await zombie.CompleteAsync(stale)).Should().BeFalse("the message was completed by another delivery");

        BusCounts counts = await zombie.GetCountsAsync();
        counts.Should().Be(new BusCounts(Enqueued: 1, Delivered: 2, Redelivered: 1, Completed: 1, RejectedCompletes: 2,
            FailedRenewals: 1, Abandoned: 0, Leased: 0, Available: 0, ExpiredRedeliveries: 1));
    }

    [PostgresFact]
    public async Task CompleteAsync_CurrentToken_CompletesOnceAndNeverRedelivers()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "m" });
        Lease lease = (await queue.ReceiveAsync(s_short))!;

        (await queue.CompleteAsync(lease)).Should().BeTrue();
        (await queue.CompleteAsync(lease)).Should().BeTrue("a retried completion with the token that completed is not duplicate work");
        (await queue.RenewAsync(lease, s_long)).Should().BeFalse("a completed message has no lease");
        await TestDatabase.WaitForDatabaseClockPastAsync(lease.LeaseUntil!.Value);

        (await queue.ReceiveAsync(s_long)).Should().BeNull("a completed message is never delivered again, even after its lease time");
        BusCounts counts = await queue.GetCountsAsync();
        counts.Should().Be(new BusCounts(Enqueued: 1, Delivered: 1, Redelivered: 0, Completed: 1, RejectedCompletes: 0,
            FailedRenewals: 1, Abandoned: 0, Leased: 0, Available: 0, ExpiredRedeliveries: 0));
    }

    [PostgresFact]
    public async Task CompleteAsync_LeaseExpiredEvenIfNotRetaken_IsRejectedAndCounted()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(new[] { "m" });
        Lease lease = (await queue.ReceiveAsync(s_short))!;
        await TestDatabase.WaitForDatabaseClockPastAsync(lease.LeaseUntil!.Value);

        (await queue.CompleteAsync(lease)).Should().BeFalse("a late completion is rejected: the message will be redelivered");

        BusCounts counts = await queue.GetCountsAsync();
        counts.Completed.Should().Be(0);
        counts.RejectedCompletes.Should().Be(1);
        (await queue.ReceiveAsync(s_long))!.MessageId.Should().Be(lease.MessageId);
    }

    [PostgresFact]
    public async Task AbandonAsync_CurrentLease_ReleasesAtOnceForTheNextReceive()
    {
        PostgresLeaseQueue first = await NewQueueAsync(owner: "first");
        PostgresLeaseQueue second = await SameQueueAsync(first, owner: "second");
        await first.EnqueueAsync(new[] { "m" });
        Lease lease = (await first.ReceiveAsync(s_long))!;

        (await first.AbandonAsync(lease)).Should().BeTrue();
        (await first.AbandonAsync(lease)).Should().BeTrue("a retried abandon is recognised by its token and not counted twice");
        (await first.GetCountsAsync()).Available.Should().Be(1);
        Lease again = (await second.ReceiveAsync(s_long))!;

        again.MessageId.Should().Be(lease.MessageId, "the ten-minute lease was released, not waited out");
        again.DeliveryCount.Should().Be(2);
        (await first.AbandonAsync(lease)).Should().BeFalse("the message is now another delivery's");
        (await first.CompleteAsync(lease)).Should().BeFalse();
        (await second.CompleteAsync(again)).Should().BeTrue();
        BusCounts counts = await first.GetCountsAsync();
        counts.Should().Be(new BusCounts(Enqueued: 1, Delivered: 2, Redelivered: 1, Completed: 1, RejectedCompletes: 1,
            FailedRenewals: 0, Abandoned: 1, Leased: 0, Available: 0, ExpiredRedeliveries: 0));
    }

    [PostgresFact]
    public async Task GetCountsAsync_MixedOutcomes_AddUp()
    {
        PostgresLeaseQueue queue = await NewQueueAsync();
        await queue.EnqueueAsync(Enumerable.Range(0, 10).Select(i => i.ToString()).ToArray());
        Lease[] leases = new Lease[6];
        for (int i = 0; i < leases.Length; i++)
        {
            leases[i] = (await queue.ReceiveAsync(s_long))!;
        }

        for (int i = 0; i < 3; i++)
        {
            (await queue.CompleteAsync(leases[i])).Should().BeTrue();
        }

        (await queue.AbandonAsync(leases[3])).Should().BeTrue();

        BusCounts counts = await queue.GetCountsAsync();
        counts.Should().Be(new BusCounts(Enqueued: 10, Delivered: 6, Redelivered: 0, Completed: 3, RejectedCompletes: 0,
            FailedRenewals: 0, Abandoned: 1, Leased: 2, Available: 5, ExpiredRedeliveries: 0));
        (counts.Completed + counts.Leased + counts.Available).Should().Be(counts.Enqueued);
    }

    [PostgresFact]
    public async Task RenewAsync_BackendTerminatedWhileWaiting_ReconnectsAndRenews()
    {
        string application = "mb-test-" + Guid.NewGuid().ToString("N")[..12];
        PostgresLeaseQueueOptions options = TestDatabase.NewOptions(applicationName: application);
        options.ReconnectInitialDelay = TimeSpan.FromMilliseconds(10);
        PostgresLeaseQueue queue = Track(await TestDatabase.CreateQueueAsync(options));
        await queue.EnqueueAsync(new[] { "m" });
        Lease lease = (await queue.ReceiveAsync(s_long))!;
        await using NpgsqlConnection admin = await TestDatabase.OpenAdminAsync();

        // Hold the message's row lock, so that the renewal is in flight on the server, blocked, when its backend is terminated.
        await using (NpgsqlTransaction transaction = await admin.BeginTransactionAsync())
        {
            await Execute(admin, $"SELECT 1 FROM {options.QueueName} WHERE id = {lease.MessageId} FOR UPDATE", transaction);
            Task<bool> renewal = queue.RenewAsync(lease, s_long);
            int blocked = await PollAsync(admin, transaction,
                $"SELECT count(*)::int FROM pg_stat_activity WHERE application_name = '{application}' AND wait_event_type = 'Lock'");
            blocked.Should().Be(1);

            int terminated = await ScalarAsync(admin,
                TerminateSql(application), transaction);
            terminated.Should().BeGreaterThanOrEqualTo(1);
            await transaction.RollbackAsync();

            (await renewal.WaitAsync(TestDatabase.Patience)).Should().BeTrue("the renewal reconnects and runs again on a new connection");
        }

        queue.Reconnects.Should().BeGreaterThanOrEqualTo(1);
        (await queue.CompleteAsync(lease)).Should().BeTrue();
        (await queue.GetCountsAsync()).Completed.Should().Be(1);
    }

    [PostgresFact]
    public async Task Operations_AllPooledBackendsTerminated_Reconnect()
    {
        string application = "mb-test-" + Guid.NewGuid().ToString("N")[..12];
        PostgresLeaseQueue queue = Track(await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions(applicationName: application)));
        await queue.EnqueueAsync(Enumerable.Range(0, 20).Select(i => i.ToString()).ToArray());

        // Several pooled connections, then every one of them killed while idle (what a server restart does to a pool).
        Lease?[] leases = await Task.WhenAll(Enumerable.Range(0, 4).Select(_ => queue.ReceiveAsync(s_long)));
        await using NpgsqlConnection admin = await TestDatabase.OpenAdminAsync();
        int terminated = await ScalarAsync(admin,
            TerminateSql(application));
        terminated.Should().BeGreaterThanOrEqualTo(1);

        foreach (Lease? lease in leases)
        {
            (await queue.CompleteAsync(lease!)).Should().BeTrue();
        }

        while (await queue.ReceiveAsync(s_long) is { } lease)
        {
            (await queue.CompleteAsync(lease)).Should().BeTrue();
        }

        BusCounts counts = await queue.GetCountsAsync();
        counts.Completed.Should().Be(20);
        counts.RejectedCompletes.Should().Be(0);
    }

    [PostgresFact]
    public async Task EnsureSchemaAsync_WrongPassword_NamesHostPortDatabaseButNotThePassword()
    {
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { Password = "not-the-password-x7" };
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions { ConnectionString = builder.ConnectionString });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.EnsureSchemaAsync()).Should()
            .ThrowAsync<QueueConnectionException>()).Which;

        e.Message.Should().Contain($"{builder.Host}:{builder.Port}").And.Contain($"'{builder.Database}'").And.Contain("28P01")
            .And.NotContain("not-the-password-x7");
        e.ToString().Should().NotContain("not-the-password-x7");
        e.Endpoint.Should().StartWith($"{builder.Host}:{builder.Port}, database '{builder.Database}'");
        queue.Reconnects.Should().Be(0, "rejected credentials are not retried");
    }

    [PostgresFact]
    public async Task EnsureSchemaAsync_NoPasswordWhileTheServerAsksForOne_ConnectionExceptionNotRetried()
    {
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { Password = null };
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions { ConnectionString = builder.ConnectionString });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.EnsureSchemaAsync()).Should()
            .ThrowAsync<QueueConnectionException>()).Which;

        e.Message.Should().Contain($"{builder.Host}:{builder.Port}").And.Contain("No password has been provided");
        queue.Reconnects.Should().Be(0, "a missing password is not retried");
    }

    [PostgresFact]
    public async Task EnsureSchemaAsync_MissingDatabase_NamesIt()
    {
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { Database = "no_such_database_42" };
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions { ConnectionString = builder.ConnectionString });

        (await FluentActions.Awaiting(() => queue.EnsureSchemaAsync()).Should().ThrowAsync<QueueConnectionException>())
            .Which.Message.Should().Contain("'no_such_database_42'").And.Contain("3D000");
    }

    [PostgresFact]
    public async Task EnsureSchemaAsync_StartupParameterRefused_ConnectionExceptionNamingIt()
    {
        // The server refuses the session itself (not a login error): still a connection failure, not retried, in one line.
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { Options = "-c statement_timeout=nonsense" };
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions { ConnectionString = builder.ConnectionString });

        (await FluentActions.Awaiting(() => queue.EnsureSchemaAsync()).Should().ThrowAsync<QueueConnectionException>())
            .Which.Message.Should().Contain("statement_timeout").And.EndWith("(SQLSTATE 22023)").And.NotContain("\n");
    }

    [Theory]
    [InlineData("Host=127.0.0.1;Prot=5432;Password=hunter2secret")]
    [InlineData("Host=127.0.0.1;Port=not-a-number;Password=hunter2secret")]
    [InlineData("Host=127.0.0.1;Port=70000;Password=hunter2secret")]
    [InlineData("Host=127.0.0.1;Password=hunter2secret;Timeout=soon")]
    [InlineData("Database=db;Password=hunter2secret")]
    [InlineData("just some words hunter2secret")]
    [InlineData("Host=127.0.0.1;Password=hunter2secret;Minimum Pool Size=500")]
    [InlineData("Host=127.0.0.1;Password=hunter2secret;Maximum Pool Size=0")]
    [InlineData("Host=127.0.0.1;Password=hunter2secret;Connection Idle Lifetime=-5")]
    public void Constructor_MalformedConnectionString_RejectedBeforeConnectingWithoutEchoingIt(string connectionString)
    {
        Action create = () => _ = new PostgresLeaseQueue(new PostgresLeaseQueueOptions { ConnectionString = connectionString });
        Action validate = () => PostgresLeaseQueue.ValidateConnectionString(connectionString);

        create.Should().Throw<ArgumentException>().Which.Message.Should().Contain("connection string").And.NotContain("hunter2secret");
        validate.Should().Throw<ArgumentException>().Which.Message.Should().Contain("connection string").And.NotContain("hunter2secret");
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("   ")]
    public void Constructor_NoConnectionString_Throws(string? connectionString)
    {
        Action create = () => _ = new PostgresLeaseQueue(new PostgresLeaseQueueOptions { ConnectionString = connectionString });

        create.Should().Throw<ArgumentException>().WithMessage("*connection string is empty*");
    }

    [Theory]
    [InlineData("")]
    [InlineData("Queue")]
    [InlineData("1queue")]
    [InlineData("queue; DROP TABLE x")]
    [InlineData("a_name_that_is_far_too_long_for_the_queue_x")]
    public void Constructor_InvalidQueueName_ThrowsNamingTheValue(string name)
    {
        Action create = () => _ = new PostgresLeaseQueue(new PostgresLeaseQueueOptions { ConnectionString = "Host=127.0.0.1", QueueName = name });

        create.Should().Throw<ArgumentException>().Which.Message.Should().Contain($"'{name}'").And.Contain("1 to 40 characters");
    }

    [Fact]
    public async Task ReceiveAsync_LeaseDurationOutOfRange_ThrowsBeforeConnecting()
    {
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions { ConnectionString = "Host=127.0.0.1;Port=1" });

        await FluentActions.Awaiting(() => queue.ReceiveAsync(TimeSpan.Zero)).Should().ThrowAsync<ArgumentOutOfRangeException>()
            .WithMessage("*leaseDuration*valid range*");
    }

    [Fact]
    public async Task EnsureSchemaAsync_NothingListening_FailsAtOnceNamingHostPortDatabase()
    {
        int port = FreePort();
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions
        {
            ConnectionString = $"Host=127.0.0.1;Port={port};Database=somedb;Username=someone;Password=hunter2secret",
        });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.EnsureSchemaAsync()).Should()
            .ThrowAsync<QueueConnectionException>().WaitAsync(TestDatabase.Patience)).Which;

        e.Message.Should().StartWith($"Cannot connect to PostgreSQL at 127.0.0.1:{port}, database 'somedb', user 'someone': ")
            .And.NotContain("hunter2secret");
        e.ToString().Should().NotContain("hunter2secret");
        e.Endpoint.Should().Be($"127.0.0.1:{port}, database 'somedb', user 'someone'");
    }

    [Fact]
    public async Task EnsureSchemaAsync_ServerNeverAnswers_NoRetrying_FailsAfterTheConnectTimeoutSayingWhy()
    {
        // A port that accepts connections and never says a word: only the connect timeout can end the attempt.
        (QueueConnectionException e, long reconnects, int port) = await EnsureSchemaOnSilentListenerAsync(TimeSpan.Zero);

        e.Message.Should().Be($"Cannot connect to PostgreSQL at 127.0.0.1:{port}, database 'somedb', user 'someone': the server accepts " +
            "connections but the session did not start within the connect timeout (1 s): a busy machine or server, or not a PostgreSQL server");
        reconnects.Should().Be(0);
    }

    [Fact]
    public async Task EnsureSchemaAsync_ServerNeverAnswers_RetriesWithinTheReconnectTimeoutThenSaysSo()
    {
        // Room for a retry after a 1 s attempt, even when a busy machine slows the attempt.
        (QueueConnectionException e, long reconnects, int port) = await EnsureSchemaOnSilentListenerAsync(TimeSpan.FromSeconds(4));

        e.Message.Should().MatchRegex(
            $@"^Cannot connect to PostgreSQL at 127\.0\.0\.1:{port}, database 'somedb', user 'someone': the server accepts connections but " +
            @"the session did not start within the connect timeout \(1 s\): a busy machine or server, or not a PostgreSQL server " +
            @"\(still failing after retrying for [0-9.]+ s\)$");
        reconnects.Should().BeGreaterThan(0, "a server that accepts connections is retried, as a lost connection is");
    }

    private static async Task<(QueueConnectionException Error, long Reconnects, int Port)> EnsureSchemaOnSilentListenerAsync(TimeSpan reconnectTimeout)
    {
        await using HoldingThenForwardingProxy silent = new(server: null, closeAtOnce: false);
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions
        {
            ConnectionString = $"Host=127.0.0.1;Port={silent.Port};Database=somedb;Username=someone;Password=hunter2secret",
            ConnectTimeout = TimeSpan.FromSeconds(1),
            ReconnectTimeout = reconnectTimeout,
        });

        QueueConnectionException e = (await FluentActions.Awaiting(() => queue.EnsureSchemaAsync()).Should()
            .ThrowAsync<QueueConnectionException>().WaitAsync(TestDatabase.Patience)).Which;
        e.Message.Should().NotContain("hunter2secret");
        e.ToString().Should().NotContain("hunter2secret");
        return (e, queue.Reconnects, silent.Port);
    }

    [PostgresFact]
    public Task EnsureSchemaAsync_FirstSessionsNeverAnswered_RetriesAndConnects() => FirstSessionsNotServed_RetriesAndConnectsAsync(closeAtOnce: false);

    [PostgresFact]
    public Task EnsureSchemaAsync_FirstConnectionsClosedAtOnce_RetriesAndConnects() => FirstSessionsNotServed_RetriesAndConnectsAsync(closeAtOnce: true);

    private static async Task FirstSessionsNotServed_RetriesAndConnectsAsync(bool closeAtOnce)
    {
        // The first connections are held silent (a server, or a process starting on a machine, too busy to start the session in
        // time) or closed at once; once the queue has scheduled a retry, connections reach the real server. The retry connects.
        NpgsqlConnectionStringBuilder real = new(TestDatabase.ConnectionString);
        await using HoldingThenForwardingProxy proxy = new((real.Host!, real.Port), closeAtOnce);
        PostgresLeaseQueueOptions options = TestDatabase.NewOptions();
        options.ConnectionString = new NpgsqlConnectionStringBuilder(TestDatabase.ConnectionString) { Host = "127.0.0.1", Port = proxy.Port }.ConnectionString;
        options.ConnectTimeout = TimeSpan.FromSeconds(1);
        await using PostgresLeaseQueue queue = new(options); // disposed before the proxy it talks through

        Task connect = queue.EnsureSchemaAsync();
        await proxy.ForwardOnceRetriedAsync(() => queue.Reconnects > 0, connect, TestDatabase.Patience);
        await connect.WaitAsync(TestDatabase.Patience);

        queue.Reconnects.Should().BeGreaterThan(0);
        proxy.Held.Should().BeGreaterThan(0, "the first attempt was not served");
        (await queue.EnqueueAsync(["a"])).Should().Be(1);
        (await queue.GetCountsAsync()).Enqueued.Should().Be(1);
        await queue.DropAsync();
    }

    [Fact]
    public async Task ReceiveAsync_ServerGoneForLongerThanTheReconnectTimeout_GivesUpWithTheConnectionError()
    {
        int port = FreePort();
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions
        {
            ConnectionString = $"Host=127.0.0.1;Port={port};Database=somedb;Username=someone",
            // Long enough for the first refused connection (milliseconds) and a retry after 10 ms, even on a loaded machine; every
            // second here is a second of the suite's run, which waits out the whole timeout.
            ReconnectTimeout = TimeSpan.FromSeconds(2),
            ReconnectInitialDelay = TimeSpan.FromMilliseconds(10),
            ReconnectMaxDelay = TimeSpan.FromMilliseconds(50),
        });

        (await FluentActions.Awaiting(() => queue.ReceiveAsync(s_long)).Should().ThrowAsync<QueueConnectionException>()
            .WaitAsync(TestDatabase.Patience)).Which.Message.Should().Contain("after reconnecting");
        queue.Reconnects.Should().BeGreaterThanOrEqualTo(1, "an operation retries a lost connection before giving up");
    }

    internal static int FreePort()
    {
        using System.Net.Sockets.TcpListener listener = new(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>Terminates the backends of one application name only (materialized first: the filter must run before the kill).</summary>
    private static string TerminateSql(string application) =>
        $"WITH targets AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE application_name = '{application}') "
        + "SELECT count(*)::int FROM targets WHERE pg_terminate_backend(pid)";

    private static async Task Execute(NpgsqlConnection connection, string sql, NpgsqlTransaction? transaction = null)
    {
        await using NpgsqlCommand command = new(sql, connection, transaction);
        await command.ExecuteNonQueryAsync();
    }

    /// <summary>What the table says, read apart from the queue (its lease owner, its lease's end).</summary>
    private static async Task<T> ScalarAsync<T>(string sql)
    {
        await using NpgsqlConnection connection = await TestDatabase.OpenAdminAsync();
        await using NpgsqlCommand command = new(sql, connection);
        return (T)(await command.ExecuteScalarAsync())!;
    }

    private static async Task<int> ScalarAsync(NpgsqlConnection connection, string sql, NpgsqlTransaction? transaction = null)
    {
        await using NpgsqlCommand command = new(sql, connection, transaction);
        return (int)(await command.ExecuteScalarAsync())!;
    }

    /// <summary>Runs <paramref name="sql"/> until it returns non-zero, within the patience.</summary>
    private static async Task<int> PollAsync(NpgsqlConnection connection, NpgsqlTransaction transaction, string sql)
    {
        using CancellationTokenSource timeout = new(TestDatabase.Patience);
        while (true)
        {
            int value = await ScalarAsync(connection, sql, transaction);
            if (value != 0)
            {
                return value;
            }

            await Task.Delay(10, timeout.Token);
        }
    }

    private PostgresLeaseQueue Track(PostgresLeaseQueue queue)
    {
        _queues.Add(queue);
        return queue;
    }

    private async Task<PostgresLeaseQueue> NewQueueAsync(string owner = "test") =>
        Track(await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions(owner: owner)));

    private async Task<PostgresLeaseQueue> SameQueueAsync(PostgresLeaseQueue other, string owner) =>
        Track(await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions(other.QueueName, owner)));
}
