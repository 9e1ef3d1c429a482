using System.Net;
using System.Net.Sockets;
using System.Text;
using MessageBus.RabbitMq.Internal;
using RabbitMQ.Client;
using TestSupport.RabbitMq;

namespace MessageBus.RabbitMq.Tests;

/// <summary>
/// The RabbitMQ queue against a real broker: deliveries held by their connection and their lease, the record every queue object folds into the
/// same counts, the first recorded completion of a message counting once, copies of completed messages dropped, and the
/// connection's failures. Events "another worker" wrote are appended to the record by the test, as that worker would have.
/// </summary>
public sealed class RabbitMqLeaseQueueTests : IAsyncLifetime
{
    private static readonly TimeSpan Lease = TimeSpan.FromMinutes(10);
    private readonly List<RabbitMqLeaseQueue> _queues = [];

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_queues.Count > 0)
        {
            await _queues[0].DropAsync();
        }

        foreach (RabbitMqLeaseQueue queue in _queues)
        {
            await queue.DisposeAsync();
        }
    }

    [RabbitMqFact]
    public async Task ReceiveAsync_EmptyQueue_ReturnsNull()
    {
        RabbitMqLeaseQueue queue = await NewAsync();

        (await queue.ReceiveAsync(Lease)).Should().BeNull();
    }

    [RabbitMqFact]
    public async Task EnqueueAsync_TwoProducers_IdsFollowTheRecordsCount_DeliveredInOrderOfPublishing()
    {
        RabbitMqLeaseQueue a = await NewAsync();
        RabbitMqLeaseQueue b = await NewAsync(a.QueueName);

        await a.EnqueueAsync(["a1", "a2"]);
        await b.EnqueueAsync(["b1"]);
        await a.EnqueueAsync(["a3"]);

        var leases = new List<Lease>();
        while (await b.ReceiveAsync(Lease) is { } lease)
        {
            leases.Add(lease);
        }

        leases.Select(l => (l.MessageId, l.Payload)).Should().Equal((1, "a1"), (2, "a2"), (3, "b1"), (4, "a3"));
        leases.Should().OnlyContain(l => l.DeliveryCount == 1 && l.LeaseUntil == null);
        leases.Select(l => l.Token).Should().OnlyHaveUniqueItems();
    }

    [RabbitMqFact]
    public async Task GetCountsAsync_TwoQueueObjects_FoldTheSameRecordIntoTheSameCounts()
    {
        RabbitMqLeaseQueue worker = await NewAsync();
        RabbitMqLeaseQueue watcher = await NewAsync(worker.QueueName, "watcher");
        await worker.EnqueueAsync(["a", "b", "c"]);

        Lease a = (await worker.ReceiveAsync(Lease))!;
        Lease b = (await worker.ReceiveAsync(Lease))!;
        (await worker.CompleteAsync(a)).Should().BeTrue();
        (await worker.AbandonAsync(b)).Should().BeTrue();
        (await worker.RenewAsync(b, Lease)).Should().BeFalse();
        Lease held = (await worker.ReceiveAsync(Lease))!;

        var expected = new BusCounts(
            Enqueued: 3, Delivered: 3, Redelivered: 1, Completed: 1, RejectedCompletes: 0, FailedRenewals: 1, Abandoned: 1, Leased: 1, Available: 1, ExpiredRedeliveries: 0);
        (await worker.GetCountsAsync()).Should().Be(expected);
        (await watcher.GetCountsAsync()).Should().Be(expected, "the counts are the record's, not a queue object's");
        held.MessageId.Should().Be(b.MessageId, "the abandoned message is first in line again");
        watcher.Holders().Should().ContainSingle().Which.Should().StartWith("test/");
    }

    [RabbitMqFact]
    public async Task CompleteAsync_AnotherDeliveryCompletedTheMessageFirst_TheRecordRefusesThisOne()
    {
        RabbitMqLeaseQueue queue = await NewAsync();
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(Lease))!;

        // A worker that held the message before and lost its connection after recording its completion, as a broker restart can
        // leave it: its completion is in the record first.
        await AppendAsync(queue, QueueRecord.Completed, "lost-worker/1", lease.MessageId);

        (await queue.CompleteAsync(lease)).Should().BeFalse("the record has the message completed already: this work was done twice");
        (await queue.CompleteAsync(lease)).Should().BeFalse("asked again, the same answer");
        BusCounts counts = await queue.GetCountsAsync();
        (counts.Completed, counts.RejectedCompletes, counts.Leased, counts.Available).Should().Be((1, 1, 0, 0), "the message counts once; acknowledged all the same");
    }

    [RabbitMqFact]
    public async Task CompleteAsync_Twice_TheSameAnswer_CountedOnce()
    {
        RabbitMqLeaseQueue queue = await NewAsync();
        await queue.EnqueueAsync(["m"]);
        Lease lease = (await queue.ReceiveAsync(Lease))!;

        (await queue.CompleteAsync(lease)).Should().BeTrue();
        (await queue.CompleteAsync(lease)).Should().BeTrue("a retry of the delivery that completed the message");

        BusCounts counts = await queue.GetCountsAsync();
        (counts.Completed, counts.RejectedCompletes).Should().Be((1, 0));
    }

    [RabbitMqFact]
    public async Task ReceiveAsync_FlaggedCopyOfAMessageTheRecordShowsCompleted_AcknowledgedAndSkipped()
    {
        RabbitMqLeaseQueue holder = await NewAsync();
        RabbitMqLeaseQueue other = await NewAsync(holder.QueueName, "other");
        await holder.EnqueueAsync(["m"]);
        Lease lease = (await holder.ReceiveAsync(Lease))!;

        // The holder recorded the completion and lost its connection before the acknowledgement: the broker requeues a copy.
        await AppendAsync(holder, QueueRecord.Completed, "test-crashed/1", lease.MessageId);
        await holder.AbortConnectionAsync();

        BusCounts counts = await WaitAsync(other, c => c.Delivered == 2, "the copy to be delivered and dropped", receive: true);
        (counts.Completed, counts.Leased, counts.Available, counts.Redelivered, counts.ExpiredRedeliveries).Should().Be((1, 0, 0, 1, 1));
        (await holder.CompleteAsync(lease)).Should().BeFalse("its connection is gone: the delivery is no longer held");
    }

    [RabbitMqFact]
    public async Task ReceiveAsync_UnflaggedCopyOfACompletedMessage_AsABrokerRestartCanLeaveIt_AFreshQueueObjectSkipsIt()
    {
        RabbitMqLeaseQueue first = await NewAsync();
        await first.EnqueueAsync(["m"]);
        Lease lease = (await first.ReceiveAsync(Lease))!;
        (await first.CompleteAsync(lease)).Should().BeTrue();

        // The same message again, not flagged redelivered: a restarted broker that lost the acknowledgement may deliver it so.
        await using (IConnection connection = await new ConnectionFactory { Uri = TestBroker.Uri }.CreateConnectionAsync())
        await using (IChannel channel = await connection.CreateChannelAsync(new CreateChannelOptions(true, true)))
        {
            var properties = new BasicProperties { Persistent = true, MessageId = lease.MessageId.ToString(System.Globalization.CultureInfo.InvariantCulture) };
            await channel.BasicPublishAsync("", first.QueueName, true, properties, Encoding.UTF8.GetBytes("m"));
        }

        RabbitMqLeaseQueue fresh = await NewAsync(first.QueueName, "fresh");
        (await fresh.ReceiveAsync(Lease)).Should().BeNull("the copy is of a completed message: acknowledged and skipped");
        BusCounts counts = await fresh.GetCountsAsync();
        (counts.Completed, counts.Available, counts.Leased, counts.Delivered).Should().Be((1, 0, 0, 2));
    }

    [RabbitMqFact]
    public async Task ConnectionLost_ItsDeliveriesAreRefusedAndCounted_TheQueueReconnectsAndGoesOn()
    {
        RabbitMqLeaseQueue queue = await NewAsync();
        await queue.EnqueueAsync(["a", "b", "c"]);
        Lease a = (await queue.ReceiveAsync(Lease))!;
        Lease b = (await queue.ReceiveAsync(Lease))!;

        await queue.AbortConnectionAsync();

        (await queue.RenewAsync([a, b], Lease)).Should().Equal(false, false);
        (await queue.CompleteAsync(a)).Should().BeFalse();
        (await queue.AbandonAsync(b)).Should().BeFalse();
        var again = new List<Lease>();
        while (await queue.ReceiveAsync(Lease) is { } lease)
        {
            again.Add(lease);
            (await queue.CompleteAsync(lease)).Should().BeTrue();
        }

        again.Select(l => l.Payload).Should().BeEquivalentTo("a", "b", "c");
        again.Where(l => l.Payload != "c").Should().OnlyContain(l => l.DeliveryCount == 2);
        BusCounts counts = await queue.GetCountsAsync();
        (counts.Completed, counts.RejectedCompletes, counts.FailedRenewals, counts.ExpiredRedeliveries, counts.Leased, counts.Available).Should().Be((3, 1, 2, 2, 0, 0));
        queue.Reconnects.Should().BeGreaterThan(0);
    }

    [RabbitMqFact]
    public async Task LeaseNotRenewed_TheQueueRequeuesIt_RenewAndCompleteRefused_NextDeliveryCountsAsExpired()
    {
        // Only the lapse is asserted (a lease kept by renewals in time would be a claim about time): a 50 ms lease with no renewal
        // lapses at some point, and then the message comes back; the queue object that held it sees it again as a stranger would.
        RabbitMqLeaseQueue queue = await NewAsync();
        await queue.EnqueueAsync(["a"]);
        Lease stale = (await queue.ReceiveAsync(TimeSpan.FromMilliseconds(50)))!;

        Lease? fresh = null;
        using var timeout = new CancellationTokenSource(TestBroker.Patience);
        while ((fresh = await queue.ReceiveAsync(Lease)) is null)
        {
            await Task.Delay(20, timeout.Token);
        }

        (fresh.MessageId, fresh.DeliveryCount).Should().Be((stale.MessageId, 2));
        (await queue.RenewAsync([stale], Lease)).Should().Equal(false);
        (await queue.CompleteAsync(stale)).Should().BeFalse();
        (await queue.AbandonAsync(stale)).Should().BeFalse();
        (await queue.CompleteAsync(fresh)).Should().BeTrue();
        BusCounts counts = await queue.GetCountsAsync();
        (counts.Completed, counts.RejectedCompletes, counts.FailedRenewals, counts.ExpiredRedeliveries, counts.Abandoned, counts.Leased).Should().Be((1, 1, 1, 1, 0, 0));
    }

    [RabbitMqFact]
    public async Task PurgeAsync_WhileTheRecordIsStillBeingRead_TheDeletedStreamsEventsAreNotFoldedIntoTheNewOne()
    {
        // A long record (5000 markers of another process), a queue object that starts reading it and purges at once: its reader may
        // still deliver the deleted stream's events after the purge. Folded into the new record, their offsets would hide the new
        // one's first events, and every wait for a verdict would last forever (a coordinator of BrokerWorker hung so, 1 run in 6).
        RabbitMqLeaseQueue writer = await NewAsync();
        await using (IConnection connection = await new ConnectionFactory { Uri = TestBroker.Uri }.CreateConnectionAsync())
        await using (IChannel channel = await connection.CreateChannelAsync(new CreateChannelOptions(true, true)))
        {
            await Task.WhenAll(Enumerable.Range(1, 5000).Select(i =>
                channel.BasicPublishAsync("", writer.RecordName, true, new BasicProperties(), QueueRecord.Format(QueueRecord.Sync, "other/1", i, 0, 0, false)).AsTask()));
        }

        for (int round = 0; round < 3; round++)
        {
            RabbitMqLeaseQueue purger = await NewAsync(writer.QueueName, $"purger{round}");
            await purger.PurgeAsync();
            await purger.EnqueueAsync(["a"]).WaitAsync(TestBroker.Patience);

            (await purger.GetCountsAsync().WaitAsync(TestBroker.Patience)).Should().Be(new BusCounts(1, 0, 0, 0, 0, 0, 0, 0, 1, 0));
        }
    }

    [RabbitMqFact]
    public async Task PurgeAsync_StartsTheCountsAndTheIdsAgain()
    {
        RabbitMqLeaseQueue queue = await NewAsync();
        await queue.EnqueueAsync(["a", "b"]);
        (await queue.CompleteAsync((await queue.ReceiveAsync(Lease))!)).Should().BeTrue();

        await queue.PurgeAsync();
        await queue.EnqueueAsync(["c"]);

        (await queue.GetCountsAsync()).Should().Be(new BusCounts(1, 0, 0, 0, 0, 0, 0, 0, 1, 0));
        (await queue.ReceiveAsync(Lease))!.MessageId.Should().Be(1);
    }

    [RabbitMqFact]
    public async Task ConnectAsync_WrongPassword_NamesHostAndPortButNotThePassword_NotRetried()
    {
        var uri = new UriBuilder(TestBroker.Uri) { Password = "not-the-password-42" };
        RabbitMqLeaseQueueOptions options = Queues.NewOptions();
        options.ConnectionString = uri.Uri.ToString();
        await using var queue = new RabbitMqLeaseQueue(options);

        Func<Task> connect = () => queue.ConnectAsync();

        (await connect.Should().ThrowAsync<QueueConnectionException>()).Which.Message.Should()
            .Be($"Cannot connect to RabbitMQ at {uri.Host}:{uri.Port}: the user name or password was refused");
        queue.Reconnects.Should().Be(0);
    }

    [Theory]
    [InlineData("refused")]
    [InlineData("unknown host")]
    public async Task ConnectAsync_NothingListening_FailsAtOnceNamingHostAndPort(string how)
    {
        (string host, int port) = how == "refused" ? ("127.0.0.1", FreePort()) : ("no-such-host.invalid", 5672);
        await using var queue = new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions { ConnectionString = $"amqp://u:hunter2secret@{host}:{port}/", QueueName = "q" });

        Func<Task> connect = () => queue.ConnectAsync();

        (await connect.Should().ThrowAsync<QueueConnectionException>()).Which.Message.Should()
            .Be($"Cannot connect to RabbitMQ at {host}:{port}: {(how == "refused" ? "connection refused (is the server running?)" : "unknown host")}");
        queue.Reconnects.Should().Be(0);
    }

    [Fact]
    public async Task ConnectAsync_ServerAcceptsButNeverAnswers_RetriesWithinTheReconnectTimeoutThenSaysSo()
    {
        using var silent = new TcpListener(IPAddress.Loopback, 0);
        silent.Start();
        int port = ((IPEndPoint)silent.LocalEndpoint).Port;
        await using var queue = new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions
        {
            ConnectionString = $"amqp://u:p@127.0.0.1:{port}/",
            QueueName = "q",
            ConnectTimeout = TimeSpan.FromMilliseconds(300),
            ReconnectTimeout = TimeSpan.FromSeconds(1),
        });

        Func<Task> connect = () => queue.ConnectAsync();

        string message = (await connect.Should().ThrowAsync<QueueConnectionException>()).Which.Message;
        message.Should().StartWith($"Cannot connect to RabbitMQ at 127.0.0.1:{port}: the server accepts connections but the AMQP handshake did not finish within the connect timeout (300 ms)")
            .And.Contain(": a busy machine or server, or not a RabbitMQ server (still failing after retrying for ");
        queue.Reconnects.Should().BeGreaterThan(0, "a server that accepts connections may be busy: it is tried again");
    }

    [Theory]
    [InlineData("not a uri")]
    [InlineData("http://u:hunter2secret@host:5672/")]
    [InlineData("")]
    public void Constructor_NotAnAmqpUri_RejectedBeforeConnectingWithoutEchoingIt(string connectionString)
    {
        Action create = () => _ = new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions { ConnectionString = connectionString, QueueName = "q" });

        create.Should().Throw<ArgumentException>().Which.Message.Should()
            .StartWith("the connection string must be an AMQP URI such as amqp://user:password@host:5672/").And.NotContain("hunter2secret");
    }

    [Theory]
    [InlineData("")]
    [InlineData("has space")]
    [InlineData("slash/no")]
    public void Constructor_InvalidQueueName_ThrowsNamingTheValue(string name) =>
        ((Action)(() => _ = new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions { ConnectionString = "amqp://localhost/", QueueName = name })))
            .Should().Throw<ArgumentException>().WithMessage($"QueueName '{name}' is not valid*");

    [Fact]
    public async Task ReceiveAsync_LeaseDurationOutOfRange_ThrowsBeforeConnecting()
    {
        await using var queue = new RabbitMqLeaseQueue(new RabbitMqLeaseQueueOptions { ConnectionString = "amqp://localhost:1/", QueueName = "q" });

        Func<Task> receive = () => queue.ReceiveAsync(TimeSpan.Zero);

        (await receive.Should().ThrowAsync<ArgumentOutOfRangeException>()).Which.ParamName.Should().Be("leaseDuration");
    }

    internal static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private async Task<RabbitMqLeaseQueue> NewAsync(string? queueName = null, string owner = "test")
    {
        RabbitMqLeaseQueue queue = await Queues.CreateAsync(Queues.NewOptions(queueName, owner));
        _queues.Add(queue);
        return queue;
    }

    /// <summary>Appends an event to the queue's record as another queue object (<paramref name="instance"/>) would.</summary>
    private static async Task AppendAsync(RabbitMqLeaseQueue queue, char kind, string instance, long id)
    {
        await using IConnection connection = await new ConnectionFactory { Uri = TestBroker.Uri }.CreateConnectionAsync();
        await using IChannel channel = await connection.CreateChannelAsync(new CreateChannelOptions(true, true));
        await channel.BasicPublishAsync("", queue.RecordName, true, new BasicProperties(), QueueRecord.Format(kind, instance, 1, id, 0, false));
    }

    private static async Task<BusCounts> WaitAsync(RabbitMqLeaseQueue queue, Func<BusCounts, bool> condition, string what, bool receive = false)
    {
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        while (true)
        {
            if (receive)
            {
                (await queue.ReceiveAsync(Lease)).Should().BeNull("the only message there is the copy, which is skipped");
            }

            BusCounts counts = await queue.GetCountsAsync();
            if (condition(counts))
            {
                return counts;
            }

            if (System.Diagnostics.Stopwatch.GetElapsedTime(start) > TestBroker.Patience)
            {
                throw new TimeoutException($"Waited {TestBroker.Patience.TotalSeconds} s for {what}; counts: {counts}");
            }

            await Task.Delay(20);
        }
    }
}
