using BrokerWorker;
using BrokerWorker.Processes;
using TestSupport;
using TestSupport.RabbitMq;

namespace MessageBus.RabbitMq.Tests;

/// <summary>
/// The BrokerWorker sample's worker processes against a real RabbitMQ (<c>--bus rabbitmq</c>), under faults: a worker killed with
/// SIGKILL, every connection closed by the server, the node killed and restarted. Every check is on the record's counts, which
/// every process folds alike: in the end every message is completed exactly once, and nothing is lost. Leases are short (1 s).
/// The tests that break the server start a node of their own, so that the other tests' node is not disturbed.
/// </summary>
public sealed class BrokerWorkerProcessTests
{
    private static readonly string[] Base =
        ["--time-scale", "1", "--steps", "4", "--cpu", "20ms", "--io", "40ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "2"];

    // For faults injected after the first completions: a run of several seconds, so that the fault lands mid-run.
    private static readonly string[] Longer =
        ["--time-scale", "1", "--steps", "4", "--cpu", "20ms", "--io", "200ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "2"];

    [RabbitMqFact]
    public async Task Sigkill_OneOfThreeWorkerProcesses_TheBrokerRedeliversItsMessages_EveryMessageCompletedOnce()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<RabbitMqLeaseQueue> run = await StartAsync(Messages, "priority", workers: 3, Base);
        WorkerChild victim = run.Children[0];

        // Kill it while it holds at least one delivery and others have been completed (mid-run).
        await run.WaitUntilAsync(async () => (await run.CountsAsync()).Completed >= 2 && Holds(run, $"priority:{victim.Id}"), "the victim to hold a delivery mid-run");
        victim.Kill();

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages, "the record counts a message's first completion only");
        (counts.Available, counts.Leased).Should().Be((0, 0));
        counts.ExpiredRedeliveries.Should().BeGreaterThan(0, "the broker requeued what the killed worker's connection held");
        (await run.StopAsync()).Should().HaveCount(2, "the two survivors exit normally and report");
    }

    [RabbitMqFact]
    public async Task EveryMode_TwoWorkerProcesses_EveryMessageCompletedOnce()
    {
        const int Messages = 12;
        foreach (string mode in Options.AllModes.Where(m => m != "single"))
        {
            await using BrokerWorkerRun<RabbitMqLeaseQueue> run = await StartAsync(Messages, mode, workers: 2, Base);

            BusCounts counts = await run.WaitForAllCompletedAsync();
            counts.Completed.Should().Be(Messages, mode);
            (counts.Available, counts.Leased).Should().Be((0, 0), mode);
            counts.RejectedCompletes.Should().BeLessThanOrEqualTo(counts.Delivered - counts.Completed, "a delivery sends at most one complete, and one per message counts");
            (await run.StopAsync()).Should().HaveCount(2, mode);
            run.Children.Should().OnlyContain(c => c.ExitCode == 0, mode);
        }
    }

    [RabbitMqNodeFact]
    public async Task CloseAllConnections_ByTheServer_TheWorkersReconnectAndNothingIsLost()
    {
        const int Messages = 30;
        await using TestNode node = await TestNode.StartAsync();
        await using BrokerWorkerRun<RabbitMqLeaseQueue> run = await StartAsync(Messages, "priority", workers: 2, Longer, node.Uri, withheld: 1);
        await run.WaitUntilAsync(async () => (await run.CountsAsync()).Completed >= 3, "the first completions");

        // The CLI boots an Erlang VM (a minute and more beside CPU-bound processes): the last message is withheld until the fault
        // is done, so that the workers are still connected, waiting for it, whenever it lands.
        await node.CtlAsync("close_all_connections", "a test closes every connection");
        await run.Queue.EnqueueAsync(["the last message"]);

        BusCounts counts = await run.WaitForAllCompletedAsync();
        (counts.Completed, counts.Available, counts.Leased).Should().Be((Messages, 0, 0));
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2, "both workers survived and exited normally");
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
        stats.Sum(s => s.Reconnects + s.ConnectionErrors).Should().BeGreaterThan(0, "every connection was closed and opened again");
    }

    [RabbitMqNodeFact]
    public async Task BrokerKilledAndRestarted_MidRun_TheWorkersReconnectAndNothingIsLost()
    {
        const int Messages = 30;
        await using TestNode node = await TestNode.StartAsync();
        await using BrokerWorkerRun<RabbitMqLeaseQueue> run = await StartAsync(Messages, "priority", workers: 2, Longer, node.Uri, withheld: 1);
        await run.WaitUntilAsync(async () => (await run.CountsAsync()).Completed >= 3, "the first completions");

        // The CLI boots an Erlang VM (a minute and more beside CPU-bound processes): the last message is withheld until the fault
        // is done, so that the workers are still connected, waiting for it, whenever it lands.
        await node.CrashAndRestartAsync();
        await run.Queue.EnqueueAsync(["the last message"]);

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages, "the queue is durable, its messages persistent and confirmed, the record's events confirmed");
        (counts.Enqueued, counts.Available, counts.Leased).Should().Be((Messages, 0, 0));
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2, "both workers survived the crash and exited normally");
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
        stats.Sum(s => s.Reconnects + s.ConnectionErrors).Should().BeGreaterThan(0, "every connection died with the node and was opened again");
    }

    [RabbitMqFact]
    public async Task WrongPassword_OneLineNamingHostAndPort_NeverThePassword_ExitCode2()
    {
        var uri = new UriBuilder(TestBroker.Uri) { Password = "not-the-password-42" };

        (int exit, string line) = await RunAppAsync("--bus", "rabbitmq", "--connection", uri.Uri.ToString(), "--modes", "priority");

        exit.Should().Be(2);
        line.Should().Be($"BrokerWorker: Cannot connect to RabbitMQ at {uri.Host}:{uri.Port}: the user name or password was refused");
    }

    [Theory]
    [InlineData("refused")]
    [InlineData("unknown host")]
    public async Task ServerUnreachable_OneLineNamingTheServer_ExitCode2(string how)
    {
        string host = how == "refused" ? "127.0.0.1" : "no-such-host.invalid";
        int port = how == "refused" ? RabbitMqLeaseQueueTests.FreePort() : 5672;

        (int exit, string line) = await RunAppAsync("--bus", "rabbitmq", "--connection", $"amqp://someone:hunter2secret@{host}:{port}/", "--modes", "priority");

        exit.Should().Be(2);
        line.Should().StartWith($"BrokerWorker: Cannot connect to RabbitMQ at {host}:{port}: ").And.NotContain("hunter2secret");
    }

    [Theory]
    [InlineData("http://someone:hunter2secret@127.0.0.1:5672/")]
    [InlineData("someone:hunter2secret@127.0.0.1")]
    public async Task MalformedConnectionString_OneLineBeforeConnecting_NeverEchoed_ExitCode2(string connection)
    {
        (int exit, string line) = await RunAppAsync("--bus", "rabbitmq", "--connection", connection, "--modes", "priority");

        exit.Should().Be(2);
        line.Should().StartWith("BrokerWorker: the connection string must be an AMQP URI").And.NotContain("hunter2secret");
    }

    [Fact]
    public async Task NoConnectionString_OneLineNamingTheVariable_ExitCode2()
    {
        string? saved = Environment.GetEnvironmentVariable(TestBroker.Variable);
        try
        {
            Environment.SetEnvironmentVariable(TestBroker.Variable, null);
            (int exit, string line) = await RunAppAsync("--bus", "rabbitmq", "--modes", "priority");

            exit.Should().Be(2);
            line.Should().Be("BrokerWorker: --bus rabbitmq needs a connection string: --connection or the PRIORITYASYNC_RABBITMQ environment variable.");
        }
        finally
        {
            Environment.SetEnvironmentVariable(TestBroker.Variable, saved);
        }
    }

    private static Task<(int Exit, string Line)> RunAppAsync(params string[] args) => BrokerWorkerApp.RunAsync(TestBroker.Patience, args);

    private static Task<BrokerWorkerRun<RabbitMqLeaseQueue>> StartAsync(int messages, string mode, int workers, string[] args, Uri? node = null, int withheld = 0) =>
        BrokerWorkerRun<RabbitMqLeaseQueue>.StartAsync("rabbitmq", (node ?? TestBroker.Uri).ToString(), TestBroker.Patience, messages, mode, workers, args,
            name => Queues.CreateAsync(Queues.NewOptions(name, "test", node)), (q, payloads) => q.EnqueueAsync(payloads), q => q.DropAsync(), withheld);

    /// <summary>Whether the record, as last read, shows a delivery held by <paramref name="owner"/>'s queue object.</summary>
    private static bool Holds(BrokerWorkerRun<RabbitMqLeaseQueue> run, string owner) =>
        run.Queue.Holders().Any(h => h.StartsWith(owner + "/", StringComparison.Ordinal));
}
