using System.IO;
using BrokerWorker;
using BrokerWorker.Bus;
using BrokerWorker.Modes;
using BrokerWorker.Processes;
using BrokerWorker.Report;

namespace Samples.Tests.BrokerWorker;

/// <summary>
/// The BrokerWorker sample on its in-memory broker (no PostgreSQL needed): every mode completes every message, the hang shows the
/// difference between renewal tied to progress and a heartbeat thread, and bad input is one line with exit code 2. Durations are
/// real time (<c>--time-scale 1</c>), with leases long against the work so that a loaded machine does not change the outcome,
/// except where a CPU part longer than the lease is the point.
/// </summary>
public sealed class BrokerWorkerMemoryTests
{
    private static readonly string[] Quick =
        ["--time-scale", "1", "--messages", "6", "--steps", "3", "--cpu", "5ms", "--io", "10ms", "--renew-every", "100ms", "--lease", "2s", "--latency", "1ms", "--concurrency", "2"];

    [Theory]
    [InlineData("priority")]
    [InlineData("single")]
    [InlineData("threadpool")]
    [InlineData("heartbeat-thread")]
    [InlineData("priority-threads")]
    public async Task EveryMode_TwoWorkers_CompletesEveryMessageAndLosesNothing(string mode)
    {
        RunResult result = await RunAsync([.. Quick, "--modes", mode, "--workers", "2"]);

        result.Stalled.Should().BeFalse();
        result.AtEnd.Completed.Should().Be(6);
        result.Final.Leased.Should().Be(0, "the workers stopped with nothing in hand");
        result.Final.Available.Should().Be(0);
        result.Final.FailedRenewals.Should().Be(0, "a 2 s lease renewed every 100 ms around 5 ms CPU parts is never late");
        result.Final.RejectedCompletes.Should().Be(0);
    }

    [Fact]
    public async Task Hang_Priority_RenewalStopsWithoutProgress_TheLeaseLapsesAndAnotherDeliveryCompletesTheMessage()
    {
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), "--modes", "priority", "--hang-message", "1", "--progress-timeout", "300ms"]);

        result.Stalled.Should().BeFalse("the hung delivery gave its lease up, and the second delivery of message 1 does not hang");
        result.AtEnd.Completed.Should().Be(6);
        result.Seen.StoppedNoProgress.Should().Be(1, "only message 1's first delivery stopped making progress");
        result.AtEnd.Redelivered.Should().Be(1);
        result.AtEnd.FailedRenewals.Should().Be(0, "the worker gave the lease up; the broker never had to refuse it");
        result.AtEnd.RejectedCompletes.Should().Be(0);
    }

    [Fact]
    public async Task Hang_PriorityThreads_RenewalStopsWithoutProgress_TheLeaseLapsesAndAnotherDeliveryCompletesTheMessage()
    {
        // The hang is an I/O call that never answers: the pool's threads stay free, and the renewal loop sees no progress.
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), "--modes", "priority-threads", "--hang-message", "1", "--progress-timeout", "300ms"]);

        result.Stalled.Should().BeFalse("the hung delivery gave its lease up, and the second delivery of message 1 does not hang");
        result.AtEnd.Completed.Should().Be(6);
        result.Seen.StoppedNoProgress.Should().Be(1, "only message 1's first delivery stopped making progress");
        result.AtEnd.Redelivered.Should().Be(1);
        result.AtEnd.FailedRenewals.Should().Be(0, "the worker gave the lease up; the broker never had to refuse it");
    }

    [Theory]
    [InlineData("--modes all")]
    [InlineData("--mode all")]
    [InlineData("")]
    public void ModesAll_OrTheDefault_ListsTheFiveModes_PriorityThreadsLast(string commandLine)
    {
        // --mode is the former spelling of --modes (every sample's lists are plural): it keeps working.
        CommandLine.TryParse(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries), out Options options, out string? error).Should().BeTrue(error);

        options.Modes.Should().Equal("priority", "single", "threadpool", "heartbeat-thread", "priority-threads");
    }

    [Fact]
    public async Task VersionAndHelp_PrintAndExit0_RunningNothing_TheHelpShowsTheCurrentNames()
    {
        (int exit, string stdout, string stderr) = await RunAppAsync(["--version"]);
        (int helpExit, string help, _) = await RunAppAsync(["--help"]);

        (exit, helpExit).Should().Be((0, 0));
        stdout.Should().StartWith("BrokerWorker ").And.Contain("(PriorityAsync ");
        stdout.TrimEnd().Split('\n').Should().ContainSingle("--version prints the version, and runs nothing");
        stderr.Should().BeEmpty();
        help.Should().Contain("--modes <LIST|all>").And.Contain("--json").And.Contain("--version").And.NotContain("--mode ");
    }

    [Fact]
    public async Task CpuPartsLongerThanARenewal_PriorityThreads_KeepsEveryLeaseAndCountsEveryCoreInTheBound()
    {
        // CPU parts of 100 ms against a 1 s lease renewed every 50 ms, one worker of 4 slots: on a PriorityThreadPool with a thread per
        // core the CPU parts of several messages run at once, and a renewal waits for the first part that ends (< 100 ms), never
        // for all of them. The CPU bound counts one thread per core.
        string[] args = ["--time-scale", "1", "--messages", "8", "--steps", "2", "--cpu", "100ms", "--io", "1ms", "--renew-every", "50ms", "--lease", "1s", "--latency", "1ms", "--concurrency", "4", "--modes", "priority-threads"];

        RunResult result = await RunAsync(args);
        CommandLine.TryParse(args, out Options options, out _).Should().BeTrue();

        result.Stalled.Should().BeFalse();
        result.AtEnd.Completed.Should().Be(8);
        result.AtEnd.FailedRenewals.Should().Be(0);
        result.AtEnd.Redelivered.Should().Be(0);
        result.Bound.Should().Be(Coordinator.Bound(options, "priority-threads"));
        if (Environment.ProcessorCount > 1)
        {
            result.Bound.Should().BeLessThan(Coordinator.Bound(options, "priority"), "the bound counts a thread per core, the priority mode's one");
        }
    }

    [Fact]
    public async Task Hang_HeartbeatThread_KeepsRenewingTheHungMessage_AZombieHoldsItUntilTheRunIsStopped()
    {
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), "--modes", "heartbeat-thread", "--hang-message", "1", "--stall-after", "2s"]);

        result.Stalled.Should().BeTrue("message 1 is leased and renewed forever and nobody else may take it");
        result.AtEnd.Completed.Should().Be(5);
        result.AtEnd.Leased.Should().Be(1);
        result.AtEnd.Redelivered.Should().Be(0, "the zombie's lease never lapsed");
        result.AtEnd.FailedRenewals.Should().Be(0);
        result.Final.Abandoned.Should().Be(1, "stopping the worker cancels the hung call and hands the message back");
    }

    [Fact]
    public async Task CpuPartLongerThanTheLease_SingleLosesTheLease_PriorityWithCheckpointsKeepsIt()
    {
        // CPU parts of 600 ms against a 300 ms lease renewed every 50 ms: on one FIFO thread a renewal waits behind whole CPU parts;
        // at the top priority level it waits behind one 10 ms slice. (Single gets no checkpoints: in a FIFO queue a checkpoint is a
        // Task.Yield, which would let the renewal through.) On a loaded machine the parts take longer still, which only widens
        // the gap between the two.
        string[] args = ["--time-scale", "1", "--messages", "2", "--steps", "2", "--cpu", "600ms", "--io", "1ms", "--renew-every", "50ms", "--lease", "300ms", "--latency", "1ms", "--concurrency", "2"];

        // Single never completes (each delivery's complete comes after its lease ran out), so its run lasts until the deadline: a
        // short one, longer only if the machine was too busy for single to reach its first renewal or complete in it.
        RunResult single = null!;
        foreach (string deadline in (string[])["3s", "12s", "48s"])
        {
            single = await RunAsync([.. args, "--modes", "single", "--deadline", deadline]);
            if (single.Final.FailedRenewals + single.Final.RejectedCompletes + single.Final.Completed > 0)
            {
                break;
            }
        }

        RunResult priority = await RunAsync([.. args, "--modes", "priority", "--checkpoint", "10ms", "--deadline", "60s", "--stall-after", "30s"]);

        (single.Final.FailedRenewals + single.Final.RejectedCompletes).Should().BeGreaterThan(0, "the broker refused a late renewal or a late complete");
        single.Final.Completed.Should().BeLessThan(2);
        priority.Stalled.Should().BeFalse();
        priority.AtEnd.Completed.Should().Be(2);
        priority.AtEnd.FailedRenewals.Should().Be(0);
        priority.AtEnd.Redelivered.Should().Be(0);
    }

    [Theory]
    [InlineData("--workers 0", "--workers must be from 1 to 64 (got 0).")]
    [InlineData("--lease 1s --renew-every 2s", "--lease (1 s) must be longer than the renewal interval --renew-every (2 s)")]
    [InlineData("--modes fifo", "unknown mode 'fifo'; the modes are priority, single, threadpool, heartbeat-thread, priority-threads.")]
    [InlineData("--mode ,", "--modes needs at least one mode.")]
    [InlineData("--modes priority --modes single", "--modes is given more than once (see --help).")]
    [InlineData("--time-scale 1e308", "--time-scale must be a number in (0, 10] (got 1E+308).")]
    [InlineData("--rate 1e-300", "--rate must be 0 (all at once) or from 0.01 to 1000000 messages per second")]
    [InlineData("--cpu 0ms --io 0ms", "there is no work to schedule.")]
    [InlineData("--messages 1000000 --steps 10000", "days of work as it runs; at most 1 day.")]
    [InlineData("--stall-after -1s", "--stall-after must be positive (got -1000 ms).")]
    [InlineData("--bus postgres --queue Bad-Name", "--queue must be 1 to 23 characters")]
    [InlineData("--cpu fast", "--cpu must be a duration such as 250ms or 1.5s (got 'fast').")]
    [InlineData("--bus postgres --connection Host=127.0.0.1;Port=notaport", "The PostgreSQL connection string is malformed")]
    [InlineData("--bus redis --connection 127.0.0.1:6379,nosuchkeyword=1", "The Redis connection string is malformed")]
    [InlineData("--bus redis --connection password=x", "The Redis connection string names no server (host:port).")]
    [InlineData("--bus kafka", "--bus")]
    [InlineData("--threads 0", "--threads must be from 1 to 1024 (got 0).")]
    [InlineData("--scaling 0", "--scaling must be whole numbers from 1 to 64 separated by commas (got '0').")]
    public async Task BadInput_OneLineAndExitCode2(string arguments, string expected)
    {
        (int exit, string stdout, string stderr) = await RunAppAsync(arguments.Split(' '));

        exit.Should().Be(2);
        stdout.Should().BeEmpty();
        stderr.Should().Contain(expected).And.StartWith("BrokerWorker: ");
        stderr.TrimEnd().Split('\n').Should().ContainSingle();
    }

    [Fact]
    public async Task DefaultRun_EveryModeAccountsForEveryMessage_ReportFitsIn120ColumnsAndDefinesEveryColumn()
    {
        // The run a newcomer starts first (no arguments: the five modes, in memory), once; the reports are written from its results.
        CommandLine.TryParse([], out Options options, out string? error).Should().BeTrue(error);
        IReadOnlyList<RunResult> results = await new Coordinator(options, TextWriter.Null).RunMemoryAsync();
        var table = new StringWriter();
        var wide = new StringWriter();
        Table.Write(table, options, results);
        Table.Write(wide, options with { Wide = true }, results);

        // Which modes keep their leases depends on how busy the cores are (the README's tables measure it); what holds at any load
        // is the accounting: every message in one state, each completed at most once, and a run that ends only when done or stopped.
        results.Select(r => r.Mode).Should().Equal(Options.AllModes);
        results.Should().OnlyContain(r => r.Final.Completed + r.Final.Available + r.Final.Leased == options.Messages && r.Final.Enqueued == options.Messages,
            "every message is in exactly one state: {0}", Describe(results));
        results.Should().OnlyContain(r => r.End != RunEnd.Completed || r.AtEnd.Completed == options.Messages, Describe(results));
        results.Should().OnlyContain(r => r.Seen.Completed == r.Final.Completed, "every completion the broker accepted is one a worker made: {0}", Describe(results));

        string[] lines = table.ToString().ReplaceLineEndings("\n").Split('\n');
        lines.Should().OnlyContain(l => l.Length <= 120);
        table.ToString().Should().Contain("The lease-worker experiment of the article \"Async Wandering, part 15\"");
        ShouldDefineEveryColumn(lines);
        string modes = string.Join(' ', lines.SkipWhile(l => !l.StartsWith("  The modes.", StringComparison.Ordinal)));
        Options.AllModes.Should().OnlyContain(m => modes.Contains($" {m}: "), "the paragraph below the table says what each mode is");
        ShouldDefineEveryColumn(wide.ToString().ReplaceLineEndings("\n").Split('\n'));
    }

    [Theory]
    [InlineData("memory")]
    [InlineData("postgres")]
    [InlineData("redis")]
    public void WorkerArguments_EveryModeWithTheDefaultQueue_TheWorkerAcceptsThemAndOpensTheCoordinatorsQueue(string bus)
    {
        // The coordinator passed the mode's table where the worker expects the prefix: broker_worker_threadpool (24 characters)
        // failed the worker's check of a prefix, and --bus postgres --workers 4 exited 2. Each worker must parse its command line
        // and arrive at the coordinator's queue.
        CommandLine.TryParse(["--bus", bus, "--workers", "4"], out Options coordinator, out string? error).Should().BeTrue(error);

        foreach (string mode in Options.AllModes)
        {
            List<string> args = Coordinator.WorkerArguments(coordinator, mode, spins: 1000);
            CommandLine.TryParse(args, out Options worker, out error).Should().BeTrue($"{mode}: {error}");
            worker.WorkerProcess.Should().BeTrue();
            worker.WorkerMode.Should().Be(mode);
            BusFactory.Table(worker, worker.WorkerMode).Should().Be(BusFactory.Table(coordinator, mode));
            worker.PoolThreadCount.Should().Be(coordinator.CoreShare, "each worker process's pool is its share of the cores");
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(8)]
    public void CoreShare_WorkerProcesses_DivideTheCoresAtLeastOneThreadEach_UnlessTold(int workers)
    {
        CommandLine.TryParse(["--workers", workers.ToString(System.Globalization.CultureInfo.InvariantCulture)], out Options options, out string? error).Should().BeTrue(error);
        CommandLine.TryParse(["--workers", workers.ToString(System.Globalization.CultureInfo.InvariantCulture), "--threads", "3"], out Options told, out error).Should().BeTrue(error);

        options.PoolThreadCount.Should().Be(Math.Max(1, Environment.ProcessorCount / workers));
        (options.PoolThreadCount * workers).Should().BeLessThanOrEqualTo(Math.Max(workers, Environment.ProcessorCount), "no more pool threads than cores, but one per process");
        told.PoolThreadCount.Should().Be(3);
        Mode.Create("priority-threads", options).CpuThreadsPerProcess.Should().Be(options.PoolThreadCount, "the CPU bound counts the threads the pools have");
    }

    [Fact]
    public async Task Redis_NothingListening_OneLineNamingHostAndPort_NeverThePassword_ExitCode2()
    {
        (int exit, _, string stderr) = await RunAppAsync(["--bus", "redis", "--connection", "127.0.0.1:1,password=hunter2", "--connect-timeout", "2s"]);

        exit.Should().Be(2);
        stderr.TrimEnd().Split('\n').Should().ContainSingle();
        stderr.TrimEnd().Should().Be("BrokerWorker: Cannot connect to Redis at 127.0.0.1:1: no connection: Connection refused");
    }

    [Fact]
    public void DefaultStallLimit_OutlastsMessagesInterleavedOnOneThread()
    {
        // 4 messages in flight on one thread, 10 steps of 100 ms CPU parts each: the first completes after 4 s of CPU parts, and
        // until then the broker sees no delivery and no completion. The stall limit of 8 leases (4 s) ended such runs as stalled.
        CommandLine.TryParse(["--messages", "12", "--steps", "10"], out Options options, out string? error).Should().BeTrue(error);

        options.SlowestMessage.Should().Be(TimeSpan.FromSeconds(5), "10 steps x (4 CPU parts of 100 ms + 100 ms of I/O)");
        options.ScaledStallAfter.Should().BeGreaterThanOrEqualTo(options.SlowestMessage * 2, "a loaded machine stretches the CPU parts");
    }

    [Fact]
    public async Task NothingListening_OneLineNamingHostPortAndDatabase_NeverThePassword_ExitCode2()
    {
        (int exit, _, string stderr) = await RunAppAsync(
            ["--bus", "postgres", "--connection", "Host=127.0.0.1;Port=1;Database=queue_db;Username=worker;Password=hunter2", "--connect-timeout", "2s"]);

        exit.Should().Be(2);
        stderr.TrimEnd().Split('\n').Should().ContainSingle();
        stderr.Should().Contain("127.0.0.1:1").And.Contain("queue_db").And.NotContain("hunter2");
    }

    // Every column of a report's table (its header line) is defined in the legend below it: a line of two spaces, the column's name
    // padded to 25 characters, and what it means.
    private static void ShouldDefineEveryColumn(string[] lines)
    {
        string header = lines.First(l => l.StartsWith("| mode |", StringComparison.Ordinal));
        string[] columns = header.Split('|', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)[1..];
        string[] defined = [.. lines.Where(l => l.Length > 27 && l.StartsWith("  ", StringComparison.Ordinal) && l[2] != ' ' && l[2..27].EndsWith("  ", StringComparison.Ordinal))
            .Select(l => l[2..27].TrimEnd())];
        columns.Should().OnlyContain(c => defined.Any(d => c.StartsWith(d, StringComparison.Ordinal)), "every column is defined below the table");
    }

    private static string Describe(IReadOnlyList<RunResult> results) =>
        string.Join("; ", results.Select(r => $"{r.Mode}: {r.End}, {r.AtEnd.Completed} of {r.AtEnd.Enqueued} completed in {r.Makespan.TotalSeconds:0.00} s, {r.AtEnd.Redelivered} delivered again"));

    [Theory]
    [InlineData("Minimum Pool Size=500", "The PostgreSQL connection string's settings do not go together: Connection can't have 'Max Pool Size' 100 under 'Min Pool Size' 500")]
    [InlineData("Maximum Pool Size=0", "The PostgreSQL connection string's Maximum Pool Size 0 is out of range: at least 1")]
    [InlineData("Connection Idle Lifetime=-5", "The PostgreSQL connection string's settings do not go together: Connection can't have ConnectionIdleLifetime")]
    public async Task InvalidPoolSettings_OneLineNamingTheSetting_ExitCode2_BeforeConnecting(string setting, string expected)
    {
        (int exit, string stdout, string stderr) = await RunAppAsync(
            ["--bus", "postgres", "--connection", $"Host=127.0.0.1;Port=1;Database=queue_db;Username=worker;Password=hunter2;{setting}"]);

        exit.Should().Be(2);
        stdout.Should().BeEmpty();
        stderr.TrimEnd().Split('\n').Should().ContainSingle();
        stderr.Should().StartWith($"BrokerWorker: {expected}").And.NotContain("hunter2");
    }

    [Fact]
    public async Task ServerNeverAnswers_OneLineSayingNoAnswerWithinTheConnectTimeout_ExitCode2()
    {
        // A port that accepts connections and never says a word: only the connect timeout ends the attempt.
        using var silent = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        silent.Start();
        int port = ((System.Net.IPEndPoint)silent.LocalEndpoint).Port;

        (int exit, _, string stderr) = await RunAppAsync(
            ["--bus", "postgres", "--connection", $"Host=127.0.0.1;Port={port};Database=queue_db;Username=worker;Password=hunter2", "--connect-timeout", "1s"]);

        exit.Should().Be(2);
        stderr.TrimEnd().Split('\n').Should().ContainSingle();
        stderr.TrimEnd().Should().Be($"BrokerWorker: Cannot connect to PostgreSQL at 127.0.0.1:{port}, database 'queue_db', user 'worker': no answer within the connect timeout (1 s)");
    }

    private static async Task<RunResult> RunAsync(string[] args)
    {
        CommandLine.TryParse(args, out Options options, out string? error).Should().BeTrue(error);
        IReadOnlyList<RunResult> results = await new Coordinator(options, TextWriter.Null).RunMemoryAsync();
        return results.Should().ContainSingle().Subject;
    }

    private static async Task<(int Exit, string Stdout, string Stderr)> RunAppAsync(string[] args)
    {
        var stdout = new StringWriter();
        var stderr = new StringWriter();
        int exit = await App.RunAsync(args, stdout, stderr);
        return (exit, stdout.ToString(), stderr.ToString());
    }
}

/// <summary>Test arguments with one option's value replaced (a repeated option is an error, as in every sample).</summary>
internal static class ArgumentsExtensions
{
    public static string[] With(this string[] args, string option, string value)
    {
        string[] copy = [.. args];
        copy[Array.IndexOf(copy, option) + 1] = value;
        return copy;
    }
}
