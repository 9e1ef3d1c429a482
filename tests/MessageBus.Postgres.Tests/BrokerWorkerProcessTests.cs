using System.IO;
using BrokerWorker;
using BrokerWorker.Processes;
using Npgsql;
using TestSupport;

namespace MessageBus.Postgres.Tests;

/// <summary>
/// The BrokerWorker sample's worker processes against a real PostgreSQL, under faults: a worker killed with SIGKILL, the workers'
/// connections terminated by the server, a renewal refused. Every check is on the database's counts: in the end every message is
/// completed exactly once as far as the database accepted it, and nothing is lost. Leases are short (1 s) to keep the tests quick.
/// </summary>
public sealed class BrokerWorkerProcessTests
{
    internal static readonly string[] Base =
        ["--time-scale", "1", "--steps", "4", "--cpu", "20ms", "--io", "40ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "2"];

    // For faults injected after the first completions: a run of several seconds (30 x 4 steps of 220 ms over 4 slots), so that the
    // fault lands mid-run on a quiet machine too, not after the workers finished (they exit once every message is completed).
    internal static readonly string[] Longer =
        ["--time-scale", "1", "--steps", "4", "--cpu", "20ms", "--io", "200ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "2"];

    [PostgresFact]
    public async Task Sigkill_OneOfThreeWorkerProcesses_ItsLeasesExpireAndAreRedelivered_EveryMessageCompletedOnce()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<PostgresLeaseQueue> run = await StartAsync(Messages, "priority", workers: 3, Base);
        WorkerChild victim = run.Children[0];

        // Kill it while it holds at least one current lease and others have been completed (mid-run).
        await WaitUntilAsync(run,
            $"SELECT count(*) FILTER (WHERE lease_owner = 'priority:{victim.Id}' AND completed_at IS NULL AND lease_until > clock_timestamp()) > 0 AND count(completed_at) >= 2 FROM {run.Queue.QueueName}",
            "the victim to hold a lease mid-run");
        victim.Kill();

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages, "every message is completed once: completed_at is set once per row");
        counts.Available.Should().Be(0);
        counts.Leased.Should().Be(0);
        counts.ExpiredRedeliveries.Should().BeGreaterThan(0, "the killed worker's leases expired and were delivered again");
        (await run.StopAsync()).Should().HaveCount(2, "the two survivors exit normally and report");
    }

    [PostgresFact]
    public async Task PriorityThreads_TwoWorkerProcesses_EveryMessageCompletedOnce()
    {
        // The fifth mode against the real broker: each process runs its messages' CPU parts on a PriorityThreadPool (its share of
        // the cores), renewals at the top level. Whether every lease is kept is the machine's doing (a process descheduled for a
        // lease misses it; the measured runs are in docs/benchmarks.md); what holds at any load is the accounting and the fencing.
        const int Messages = 20;
        await using BrokerWorkerRun<PostgresLeaseQueue> run = await StartAsync(Messages, "priority-threads", workers: 2, Base);

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages);
        counts.Available.Should().Be(0);
        counts.Leased.Should().Be(0);
        counts.RejectedCompletes.Should().BeLessThanOrEqualTo(counts.Delivered - counts.Completed, "a delivery sends at most one complete, and one per message is accepted");
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2);
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
    }

    [PostgresFact]
    public async Task PgTerminateBackend_OfTheWorkersConnections_TheyReconnectAndNothingIsLost()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<PostgresLeaseQueue> run = await StartAsync(Messages, "priority", workers: 2, Longer);
        await WaitUntilAsync(run, $"SELECT count(completed_at) >= 3 FROM {run.Queue.QueueName}", "the first completions");

        int terminated = 0;
        for (int round = 0; round < 3; round++)
        {
            terminated += await ScalarAsync<int>(
                "SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity WHERE application_name = 'broker-worker-priority'");
            await Task.Delay(200);
        }

        terminated.Should().BeGreaterThan(0, "the workers had connections open");
        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages);
        counts.Available.Should().Be(0);
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2, "both workers survived the terminations and exited normally");
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
    }

    [PostgresFact]
    public async Task RenewalRefused_TheLeaseTokenIsCancelled_WorkStopsAndNothingIsCompletedWithTheStaleToken()
    {
        // One message at a time, with long I/O parts: the message is in flight for seconds, renewed every 100 ms.
        const int Messages = 2;
        await using BrokerWorkerRun<PostgresLeaseQueue> run = await StartAsync(Messages, "priority", workers: 1,
            ["--time-scale", "1", "--steps", "3", "--cpu", "5ms", "--io", "1500ms", "--renew-every", "100ms", "--lease", "1s", "--concurrency", "1"]);
        await WaitUntilAsync(run, $"SELECT count(*) FILTER (WHERE lease_token IS NOT NULL AND completed_at IS NULL) > 0 FROM {run.Queue.QueueName}", "a delivery");

        // Another holder's token, as if the lease had been handed on: the worker's next renewal is refused.
        await ScalarAsync<int>($"WITH s AS (UPDATE {run.Queue.QueueName} SET lease_token = lease_token + 1000000000 WHERE lease_token IS NOT NULL AND completed_at IS NULL RETURNING 1) SELECT count(*)::int FROM s");

        BusCounts counts = await run.WaitForAllCompletedAsync();
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        counts.FailedRenewals.Should().BeGreaterThan(0);
        stats.Single().StoppedLeaseLost.Should().BeGreaterThan(0, "the refused renewal cancelled the lease's token");
        counts.RejectedCompletes.Should().Be(0, "the worker stopped working on the message and never tried to complete it");
        counts.ExpiredRedeliveries.Should().BeGreaterThan(0, "the message came back after the stolen lease expired, and was completed then");
        counts.Completed.Should().Be(Messages);
    }

    [PostgresFact]
    public async Task WrongPassword_OneLineNamingHostPortAndDatabase_NeverThePassword_ExitCode2()
    {
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { Password = "not-the-password-42" };
        var stdout = new StringWriter();
        var stderr = new StringWriter();

        int exit = await App.RunAsync(["--bus", "postgres", "--connection", builder.ConnectionString, "--modes", "priority"], stdout, stderr);

        exit.Should().Be(2);
        string line = stderr.ToString().TrimEnd();
        line.Split('\n').Should().ContainSingle();
        line.Should().Contain($"{builder.Host}:{builder.Port}").And.Contain(builder.Database).And.NotContain("not-the-password-42");
    }

    [PostgresFact]
    public async Task NoPassword_ServerAsksForOne_OneLineNamingTheServer_ExitCode2()
    {
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { Password = null };

        (int exit, string line) = await RunAppAsync("--bus", "postgres", "--connection", builder.ConnectionString, "--modes", "priority");

        exit.Should().Be(2);
        line.Should().Be($"BrokerWorker: Cannot connect to PostgreSQL at {builder.Host}:{builder.Port}, database '{builder.Database}', user '{builder.Username}': " +
            "No password has been provided but the backend requires one (in SASL/SCRAM-SHA-256)");
    }

    [PostgresFact]
    public async Task StatementRefusedAfterConnecting_OneLineNamingTheTableAndTheServersReason_ExitCode2()
    {
        // Connected and logged in, then the server refuses to create the queue table: the search path names no schema to create
        // it in. PostgreSQL's error has detail lines (POSITION); the report is one line.
        NpgsqlConnectionStringBuilder builder = new(TestDatabase.ConnectionString) { SearchPath = "no_such_schema" };

        (int exit, string line) = await RunAppAsync("--bus", "postgres", "--connection", builder.ConnectionString, "--modes", "priority");

        exit.Should().Be(2);
        line.Should().Be($"BrokerWorker: PostgreSQL at {builder.Host}:{builder.Port}, database '{builder.Database}', user '{builder.Username}', " +
            "could not set up the queue broker_worker_priority: no schema has been selected to create in (SQLSTATE 3F000)");
    }

    [Theory]
    [InlineData("refused")]
    [InlineData("unknown host")]
    public async Task ServerUnreachable_OneLineNamingTheServer_ExitCode2(string how)
    {
        string host = how == "refused" ? "127.0.0.1" : "no-such-host.invalid";
        int port = how == "refused" ? PostgresLeaseQueueTests.FreePort() : 5432;

        (int exit, string line) = await RunAppAsync(
            "--bus", "postgres", "--connection", $"Host={host};Port={port};Database=somedb;Username=someone;Password=hunter2secret", "--modes", "priority");

        exit.Should().Be(2);
        line.Should().StartWith($"BrokerWorker: Cannot connect to PostgreSQL at {host}:{port}, database 'somedb', user 'someone': ")
            .And.NotContain("hunter2secret");
    }

    private static Task<(int Exit, string Line)> RunAppAsync(params string[] args) => BrokerWorkerApp.RunAsync(TestDatabase.Patience, args);

    /// <summary>Restarts the cluster of tests/postgres/start.sh (fast shutdown: every connection is cut), as its owner.</summary>
    internal static async Task RestartServerAsync()
    {
        string data = Environment.GetEnvironmentVariable(PostgresRestartFactAttribute.DataVariable)
            ?? throw new InvalidOperationException($"{PostgresRestartFactAttribute.DataVariable} is not set and CI=true: CI starts the server with tests/postgres/start.sh.");
        string pgCtl = Directory.GetDirectories("/usr/lib/postgresql").OrderBy(d => Version.TryParse(Path.GetFileName(d), out Version? v) ? v : new Version(0, 0)).Select(d => Path.Combine(d, "bin", "pg_ctl")).LastOrDefault(File.Exists)
            ?? "pg_ctl";
        // -l: the restarted server writes to a log file, so it does not inherit (and hold open forever) pg_ctl's output pipes.
        string[] command = [pgCtl, "-D", Path.Combine(data, "data"), "-l", Path.Combine(data, "server.log"), "-m", "fast", "-w", "-t", "60", "restart"];
        var info = new System.Diagnostics.ProcessStartInfo(Environment.UserName == "root" ? "runuser" : command[0]) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in Environment.UserName == "root" ? ["-u", "postgres", "--", .. command] : command[1..])
        {
            info.ArgumentList.Add(argument);
        }

        using var process = System.Diagnostics.Process.Start(info)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync();
        process.ExitCode.Should().Be(0, $"pg_ctl restart: {await output} {await error}");
    }

    internal static Task<BrokerWorkerRun<PostgresLeaseQueue>> StartAsync(int messages, string mode, int workers, string[] args) =>
        BrokerWorkerRun<PostgresLeaseQueue>.StartAsync("postgres", TestDatabase.WorkerConnectionString, TestDatabase.Patience, messages, mode, workers, args,
            name => TestDatabase.CreateQueueAsync(TestDatabase.NewOptions(name)), (q, payloads) => q.EnqueueAsync(payloads), q => q.DropAsync());

    internal static async Task<T> ScalarAsync<T>(string sql)
    {
        await using NpgsqlConnection connection = await TestDatabase.OpenAdminAsync();
        await using NpgsqlCommand command = new(sql, connection);
        return (T)(await command.ExecuteScalarAsync())!;
    }

    /// <summary>Waits until <paramref name="condition"/>, a query of one boolean, is true.</summary>
    internal static Task WaitUntilAsync(BrokerWorkerRun<PostgresLeaseQueue> run, string condition, string what) =>
        run.WaitUntilAsync(() => ScalarAsync<bool>(condition), what);
}

/// <summary>Tests that restart the server cut every connection, other tests' too: they run alone, after the parallel ones.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ServerRestartCollection
{
    public const string Name = "PostgreSQL server restart";
}

/// <summary>The BrokerWorker's worker processes across a PostgreSQL restart.</summary>
[Collection(ServerRestartCollection.Name)]
public sealed class BrokerWorkerRestartTests
{
    [PostgresRestartFact]
    public async Task PostgresRestart_MidRun_TheWorkersReconnectWithBackoffAndNothingIsLost()
    {
        const int Messages = 30;
        await using BrokerWorkerRun<PostgresLeaseQueue> run = await BrokerWorkerProcessTests.StartAsync(Messages, "priority", workers: 2, BrokerWorkerProcessTests.Longer);
        await BrokerWorkerProcessTests.WaitUntilAsync(run, $"SELECT count(completed_at) >= 3 FROM {run.Queue.QueueName}", "the first completions");

        await BrokerWorkerProcessTests.RestartServerAsync();

        BusCounts counts = await run.WaitForAllCompletedAsync();
        counts.Completed.Should().Be(Messages);
        counts.Available.Should().Be(0);
        IReadOnlyList<ProcessStats> stats = await run.StopAsync();
        stats.Should().HaveCount(2, "both workers survived the restart and exited normally");
        run.Children.Should().OnlyContain(c => c.ExitCode == 0);
        stats.Sum(s => s.Reconnects + s.ConnectionErrors).Should().BeGreaterThan(0, "every pooled connection died with the server");
    }
}
