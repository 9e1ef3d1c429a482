using BrokerWorker;
using BrokerWorker.Processes;
using StackExchange.Redis;
using TestSupport;

namespace MessageBus.Redis.Tests;

/// <summary>
/// The BrokerWorker sample's worker processes against a real Redis, under faults: a worker killed with SIGKILL, every client
/// connection killed by the server, the server killed and restarted. Every check is on the server's counts: in the end every
/// message is completed exactly once as far as the server accepted it, and nothing is lost. Leases are short (1 s).
/// </summary>
public sealed class BrokerWorkerProcessTests
{
    internal static readonly string[] Base =
        ["--time-scale", "1", "--steps", "4", "--cpu", "20ms", "--io", "40ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "2"];

    // For faults injected after the first completions: a run of several seconds, so that the fault lands mid-run.
    internal static readonly string[] Longer =
        ["--time-scale", "1", "--steps", "4", "--cpu", "20ms", "--io", "200ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "2"];

    [RedisFact]
    public async Task Sigkill_OneOfThreeWorkerProcesses_ItsLeasesExpireAndAreRedelivered_EveryMessageCompletedOnce()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<RedisLeaseQueue> run = await StartAsync(Messages, "priority", workers: 3, Base);
        WorkerChild victim = run.Children[0];

        // Kill it while it holds at least one current lease and others have been completed (mid-run).
        await run.WaitUntilAsync(async () => await HoldsLeaseAsync(run, $"priority:{victim.Id}") && (await run.CountsAsync()).Completed >= 2, "the victim to hold a lease mid-run");
        victim.Kill();

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages, "every message is completed once: a completion needs the message's current lock");
        (counts.Available, counts.Leased).Should().Be((0, 0));
        counts.ExpiredRedeliveries.Should().BeGreaterThan(0, "the killed worker's locks expired and the stalled check put its messages back");
        (await run.StopAsync()).Should().HaveCount(2, "the two survivors exit normally and report");
    }

    [RedisFact]
    public async Task EveryMode_TwoWorkerProcesses_EveryMessageCompletedOnce()
    {
        const int Messages = 12;
        foreach (string mode in Options.AllModes.Where(m => m != "single"))
        {
            await using BrokerWorkerRun<RedisLeaseQueue> run = await StartAsync(Messages, mode, workers: 2, Base);

            BusCounts counts = await run.WaitForAllCompletedAsync();
            counts.Completed.Should().Be(Messages, mode);
            (counts.Available, counts.Leased).Should().Be((0, 0), mode);
            IReadOnlyList<ProcessStats> stats = await run.StopAsync();
            stats.Should().HaveCount(2, mode);
            run.Children.Should().OnlyContain(c => c.ExitCode == 0, mode);
        }
    }

    [RedisFact]
    public async Task ClientKill_EveryWorkerConnectionKilledByTheServer_TheyReconnectAndNothingIsLost()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<RedisLeaseQueue> run = await StartAsync(Messages, "priority", workers: 2, Longer);
        await run.WaitUntilAsync(async () => (await run.CountsAsync()).Completed >= 3, "the first completions");
        await using ConnectionMultiplexer admin = await TestServer.ConnectAdminAsync();

        int killed = 0;
        for (int round = 0; round < 3; round++)
        {
            killed += await KillClientsAsync(admin, "broker-worker-priority");
            await Task.Delay(200);
        }

        killed.Should().BeGreaterThan(0, "the workers had connections open");
        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages);
        counts.Available.Should().Be(0);
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2, "both workers survived the kills and exited normally");
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
    }

    [RedisFact]
    public async Task RenewalRefused_TheLeaseTokenIsCancelled_WorkStopsAndNothingIsCompletedWithTheStaleToken()
    {
        const int Messages = 2;
        await using BrokerWorkerRun<RedisLeaseQueue> run = await StartAsync(Messages, "priority", workers: 1,
            ["--time-scale", "1", "--steps", "3", "--cpu", "5ms", "--io", "1500ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "1"]);
        await run.WaitUntilAsync(async () => (await run.CountsAsync()).Leased > 0, "a delivery");

        // Another holder's token, as if the lease had been handed on: the worker's next renewal is refused.
        await using ConnectionMultiplexer admin = await TestServer.ConnectAdminAsync();
        IDatabase db = admin.GetDatabase();
        foreach (RedisValue id in await db.ListRangeAsync($"{{{run.Queue.QueueName}}}:active"))
        {
            await db.StringSetAsync($"{{{run.Queue.QueueName}}}:lock:{id}", "999999999", TimeSpan.FromSeconds(1));
        }

        BusCounts counts = await run.WaitForAllCompletedAsync();
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        counts.FailedRenewals.Should().BeGreaterThan(0);
        stats.Single().StoppedLeaseLost.Should().BeGreaterThan(0, "the refused renewal cancelled the lease's token");
        counts.RejectedCompletes.Should().Be(0, "the worker stopped working on the message and never tried to complete it");
        counts.ExpiredRedeliveries.Should().BeGreaterThan(0, "the message came back after the stolen lock expired, and was completed then");
        counts.Completed.Should().Be(Messages);
    }

    [RedisFact]
    public async Task WrongPassword_OneLineNamingHostAndPort_NeverThePassword_ExitCode2()
    {
        (string host, int port) = TestServer.HostAndPort;

        (int exit, string line) = await RunAppAsync("--bus", "redis", "--connection", $"{host}:{port},password=not-the-password-42", "--modes", "priority");

        exit.Should().Be(2);
        line.Should().Be($"BrokerWorker: Cannot connect to Redis at {host}:{port}: the server refused the credentials (WRONGPASS invalid username-password pair or user is disabled.)");
    }

    [Theory]
    [InlineData("refused")]
    [InlineData("unknown host")]
    public async Task ServerUnreachable_OneLineNamingTheServer_ExitCode2(string how)
    {
        string host = how == "refused" ? "127.0.0.1" : "no-such-host.invalid";
        int port = how == "refused" ? RedisLeaseQueueTests.FreePort() : 6379;

        (int exit, string line) = await RunAppAsync("--bus", "redis", "--connection", $"{host}:{port},password=hunter2secret", "--modes", "priority");

        exit.Should().Be(2);
        line.Should().StartWith($"BrokerWorker: Cannot connect to Redis at {host}:{port}: no connection: ").And.NotContain("hunter2secret");
    }

    [Theory]
    [InlineData("127.0.0.1:6379,password=hunter2secret,nosuchkeyword=1")]
    [InlineData("password=hunter2secret")]
    public async Task MalformedConnectionString_OneLineBeforeConnecting_NeverEchoed_ExitCode2(string connection)
    {
        (int exit, string line) = await RunAppAsync("--bus", "redis", "--connection", connection, "--modes", "priority");

        exit.Should().Be(2);
        line.Should().StartWith("BrokerWorker: The Redis connection string ").And.NotContain("hunter2secret");
    }

    [Fact]
    public async Task NoConnectionString_OneLineNamingTheVariable_ExitCode2()
    {
        string? saved = Environment.GetEnvironmentVariable(TestServer.Variable);
        try
        {
            Environment.SetEnvironmentVariable(TestServer.Variable, null);
            (int exit, string line) = await RunAppAsync("--bus", "redis", "--modes", "priority");

            exit.Should().Be(2);
            line.Should().Be("BrokerWorker: --bus redis needs a connection string: --connection or the PRIORITYASYNC_REDIS environment variable.");
        }
        finally
        {
            Environment.SetEnvironmentVariable(TestServer.Variable, saved);
        }
    }

    internal static Task<(int Exit, string Line)> RunAppAsync(params string[] args) => BrokerWorkerApp.RunAsync(TestServer.Patience, args);

    /// <summary>CLIENT KILL of every connection named <paramref name="name"/> (the workers' queue objects name theirs).</summary>
    internal static async Task<int> KillClientsAsync(ConnectionMultiplexer admin, string name)
    {
        IDatabase db = admin.GetDatabase();
        string list = (string)(await db.ExecuteAsync("CLIENT", "LIST", "TYPE", "normal"))!;
        int killed = 0;
        foreach (string line in list.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            // "id=7 addr=... name=...", the first line perhaps with RESP3's "txt:" before it.
            System.Text.RegularExpressions.Match id = System.Text.RegularExpressions.Regex.Match(line, @"\bid=(\d+)");
            if (id.Success && line.Contains($" name={name} ", StringComparison.Ordinal))
            {
                killed += (int)(long)await db.ExecuteAsync("CLIENT", "KILL", "ID", id.Groups[1].Value);
            }
        }

        return killed;
    }

    internal static Task<BrokerWorkerRun<RedisLeaseQueue>> StartAsync(int messages, string mode, int workers, string[] args) =>
        BrokerWorkerRun<RedisLeaseQueue>.StartAsync("redis", TestServer.ConnectionString, TestServer.Patience, messages, mode, workers, args,
            name => TestServer.CreateQueueAsync(TestServer.NewOptions(name)), (q, payloads) => q.EnqueueAsync(payloads), q => q.DropAsync());

    /// <summary>Whether a delivery to <paramref name="owner"/> holds a lock now.</summary>
    private static async Task<bool> HoldsLeaseAsync(BrokerWorkerRun<RedisLeaseQueue> run, string owner)
    {
        string queue = run.Queue.QueueName;
        await using ConnectionMultiplexer admin = await TestServer.ConnectAdminAsync();
        IDatabase db = admin.GetDatabase();
        foreach (RedisValue id in await db.ListRangeAsync($"{{{queue}}}:active"))
        {
            HashEntry[] message = await db.HashGetAllAsync($"{{{queue}}}:msg:{id}");
            string? token = message.FirstOrDefault(e => e.Name == "token").Value;
            if (message.Any(e => e.Name == "owner" && e.Value == owner) && (string?)await db.StringGetAsync($"{{{queue}}}:lock:{id}") == token)
            {
                return true;
            }
        }

        return false;
    }
}

/// <summary>Tests that kill the server cut every connection, other tests' too: they run alone, after the parallel ones.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ServerRestartCollection
{
    public const string Name = "Redis server restart";
}

/// <summary>The BrokerWorker's worker processes across a crash and restart of the Redis server.</summary>
[Collection(ServerRestartCollection.Name)]
public sealed class BrokerWorkerRestartTests
{
    [RedisRestartFact]
    public async Task RedisKilledAndRestarted_MidRun_TheWorkersReconnectAndNothingIsLost()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<RedisLeaseQueue> run = await BrokerWorkerProcessTests.StartAsync(Messages, "priority", workers: 2, BrokerWorkerProcessTests.Longer);
        await run.WaitUntilAsync(async () => (await run.CountsAsync()).Completed >= 3, "the first completions");
        BusCounts before = await run.CountsAsync();

        await TestServer.CrashAndRestartServerAsync();

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages, "every completion the server answered was in the append-only file, synced on every write");
        counts.Enqueued.Should().Be(Messages);
        counts.Delivered.Should().BeGreaterThanOrEqualTo(before.Delivered);
        counts.Available.Should().Be(0);
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2, "both workers survived the crash and exited normally");
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
        stats.Sum(s => s.Reconnects + s.ConnectionErrors).Should().BeGreaterThan(0, "every connection died with the server and was restored");
    }
}
