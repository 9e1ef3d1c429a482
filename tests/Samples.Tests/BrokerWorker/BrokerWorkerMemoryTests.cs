using System.IO;
using BrokerWorker;
using BrokerWorker.Bus;
using BrokerWorker.Processes;
using BrokerWorker.Report;
using LeaseWorker.Core;

namespace Samples.Tests.BrokerWorker;

/// <summary>
/// The BrokerWorker sample on its in-memory broker (no server needed). What it claims about time on one loop (a lease kept or lost,
/// a hung message given up or held by a zombie) is proven on virtual time (<c>--virtual-time</c>): the worker's loop drives a clock
/// of its own, every CPU part advances it, the broker judges leases by it, so each result is exact and the same at any load. The
/// modes on several threads (threadpool, heartbeat-thread, priority-threads) and runs of two workers cannot run on virtual time:
/// they run on the machine's clock and assert only what holds at any load (every message in exactly one state, completed at most
/// once, every completion the broker accepted one a worker made, fencing, how the run ended where the protocol decides it). Such a
/// run ends on the broker's verdict (every message completed); its stall limit, far beyond what a healthy run needs on any machine,
/// only bounds a broken one. Whether they keep their leases on a real machine is in the README's tables, with the load measured.
/// </summary>
public sealed class BrokerWorkerMemoryTests
{
    // The in-memory broker answers in 1 ms in these runs (the default is the article's 250 ms): a reply is not what they test.
    private static readonly string[] Quick =
        ["--time-scale", "1", "--messages", "6", "--steps", "3", "--cpu", "5ms", "--io", "10ms", "--renew-every", "100ms", "--lease", "2s", "--concurrency", "2"];

    // Real time: a run ends when the broker has every message completed; nothing a healthy run does comes near these bounds (and
    // the deadline, s_boundedDeadline).
    private static readonly string[] Bounded = ["--stall-after", "120s"];

    private static readonly TimeSpan s_fastReplies = TimeSpan.FromMilliseconds(1);

    private static readonly TimeSpan s_boundedDeadline = TimeSpan.FromSeconds(240);

    [Theory]
    [InlineData("priority")]
    [InlineData("single")]
    [InlineData("threadpool")]
    [InlineData("heartbeat-thread")]
    [InlineData("priority-threads")]
    public async Task EveryMode_TwoWorkers_CompletesEveryMessageExactlyOnce(string mode)
    {
        RunResult result = await RunAsync([.. Quick, .. Bounded, "--modes", mode, "--workers", "2"], s_fastReplies, s_boundedDeadline);

        // A lease that runs out on a busy machine only means a message is delivered again: it is still completed exactly once.
        result.End.Should().Be(RunEnd.Completed, Describe(result));
        result.AtEnd.Completed.Should().Be(6);
        result.Final.Leased.Should().Be(0, "the workers stopped with nothing in hand");
        result.Final.Available.Should().Be(0);
        ShouldAccountForEveryMessage(result, 6);
    }

    [Theory]
    [InlineData("priority", 1)]
    [InlineData("single", 2)]
    public async Task EveryMode_OnVirtualTime_KeepsEveryLease_ARenewalWaitsAtMostForTheCpuPartsAheadOfIt(string mode, int partsAhead)
    {
        // A 2 s lease renewed every 100 ms around 5 ms CPU parts: a renewal due during a CPU part waits for it (priority: the one
        // running; single: every part queued before it, one per message in flight), never for long enough to lose the lease.
        RunResult result = await RunAsync([.. Quick, "--virtual-time", "--modes", mode], s_fastReplies);

        result.End.Should().Be(RunEnd.Completed, Describe(result));
        result.AtEnd.Completed.Should().Be(6);
        result.Final.FailedRenewals.Should().Be(0);
        result.Final.Redelivered.Should().Be(0);
        result.Final.RejectedCompletes.Should().Be(0);
        result.Seen.WorstRenewGapMs.Should().BeLessThanOrEqualTo(100 + (partsAhead * 5), "the interval, plus the CPU parts ahead of the renewal");
        ShouldAccountForEveryMessage(result, 6);
    }

    [Fact]
    public async Task Hang_Priority_OnVirtualTime_RenewalStopsWithoutProgress_TheLeaseLapsesAndAnotherDeliveryCompletesTheMessage()
    {
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), "--virtual-time", "--modes", "priority", "--hang-message", "1"], s_fastReplies);

        result.End.Should().Be(RunEnd.Completed, "the hung delivery gave its lease up, and the second delivery of message 1 does not hang");
        result.AtEnd.Completed.Should().Be(6);
        result.Seen.StoppedNoProgress.Should().Be(1, "only message 1's first delivery stopped making progress");
        result.Seen.StoppedLeaseLost.Should().Be(0);
        result.AtEnd.Redelivered.Should().Be(1);
        result.AtEnd.FailedRenewals.Should().Be(0, "the worker gave the lease up; the broker never had to refuse it");
        result.AtEnd.RejectedCompletes.Should().Be(0);
        ShouldAccountForEveryMessage(result, 6);
    }

    [Fact]
    public async Task Hang_Single_OnVirtualTime_RenewalBlindToProgress_RenewsTheHungMessageForever_AZombieHoldsItUntilStopped()
    {
        // The other side of the priority mode's check: a renewer that does not look at progress (single's renewal loop, or a heartbeat
        // thread) keeps renewing a message whose call never answers, so nobody else may take it. The run ends stalled.
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), "--virtual-time", "--modes", "single", "--hang-message", "1", "--stall-after", "2s"], s_fastReplies, TimeSpan.FromSeconds(60));

        result.End.Should().Be(RunEnd.NoProgress, "message 1 is leased and renewed forever and nobody else may take it");
        result.AtEnd.Completed.Should().Be(5);
        result.AtEnd.Leased.Should().Be(1);
        result.AtEnd.Redelivered.Should().Be(0, "the zombie's lease never lapsed");
        result.AtEnd.FailedRenewals.Should().Be(0);
        result.Seen.StoppedNoProgress.Should().Be(0);
        result.Final.Abandoned.Should().Be(1, "stopping the worker cancels the hung call and hands the message back");
        result.Final.Available.Should().Be(1);
        ShouldAccountForEveryMessage(result, 6);
    }

    [Fact]
    public async Task Hang_PriorityThreads_TheHungDeliveryDoesNotHoldItsMessage_AnotherDeliveryCompletesIt()
    {
        // The hang is an I/O call that never answers: the pool's threads stay free, and the renewal loop sees no progress and gives the
        // lease up (the same renewal code as the priority mode's, proven exactly on virtual time above). On a machine too busy to run a
        // renewal within the lease, the broker takes the lease back first; either way the message is delivered again and completed
        // once, and the run completes: no zombie.
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), .. Bounded, "--modes", "priority-threads", "--hang-message", "1"], s_fastReplies, s_boundedDeadline);

        result.End.Should().Be(RunEnd.Completed, Describe(result));
        result.AtEnd.Completed.Should().Be(6);
        result.AtEnd.Redelivered.Should().BeGreaterThanOrEqualTo(1, "message 1's first delivery never finishes");
        ShouldAccountForEveryMessage(result, 6);
    }

    [Fact]
    public async Task Hang_HeartbeatThread_NeverGivesTheHungMessageUp_ItIsCompletedOnlyIfTheBrokerTookTheLeaseBack()
    {
        // A heartbeat thread renews whatever processing does: it never stops a delivery for lack of progress, and the hung delivery never
        // completes its message. The heartbeat keeps the lease (a zombie: the run stalls, as the README's hang table shows on PostgreSQL)
        // as long as its thread gets a core within each lease, which a busy machine does not promise; what holds at any load is that
        // message 1 is completed only after the broker took its lease back and delivered it again. The zombie itself is proven exactly on
        // virtual time for a renewal loop blind to progress (Hang_Single_...).
        RunResult result = await RunAsync([.. Quick.With("--lease", "1s"), "--modes", "heartbeat-thread", "--hang-message", "1", "--stall-after", "2s"], s_fastReplies);

        result.Seen.StoppedNoProgress.Should().Be(0, "a heartbeat thread does not look at progress");
        if (result.End == RunEnd.Completed)
        {
            result.AtEnd.Redelivered.Should().BeGreaterThanOrEqualTo(1, "message 1's first delivery never finishes: {0}", Describe(result));
        }
        else
        {
            result.AtEnd.Completed.Should().BeLessThanOrEqualTo(5 + result.AtEnd.Redelivered, Describe(result));
        }

        ShouldAccountForEveryMessage(result, 6);
    }

    [Theory]
    [InlineData("--modes all")]
    [InlineData("")]
    public void ModesAll_OrTheDefault_ListsTheFiveModes_PriorityThreadsLast(string commandLine)
    {
        CommandLine.TryParse(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries), out Options options, out string? error).Should().BeTrue(error);

        options.Modes.Should().Equal("priority", "single", "threadpool", "heartbeat-thread", "priority-threads");
    }

    [Fact]
    public void VirtualTime_WithoutModes_RunsTheModesOnOneLoop_AtTheArticlesOwnDurations()
    {
        CommandLine.TryParse(["--virtual-time"], out Options options, out string? error).Should().BeTrue(error);
        CommandLine.TryParse(["--virtual-time", "--time-scale", "0.5"], out Options scaled, out error).Should().BeTrue(error);

        options.Modes.Should().Equal("priority", "single");
        options.TimeScale.Should().Be(1, "virtual time costs nothing per second");
        scaled.TimeScale.Should().Be(0.5);
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
        help.Should().Contain("--modes <LIST|all>").And.Contain("--json").And.Contain("--version").And.Contain("--virtual-time").And.NotContain("--mode ");
        help.Split('\n').Where(l => l.StartsWith("  --", StringComparison.Ordinal) && !l.StartsWith("  --version", StringComparison.Ordinal))
            .Should().HaveCountLessThanOrEqualTo(20, "the help fits one screen: at most 20 options besides help and version");
    }

    [Fact]
    public async Task CpuPartsLongerThanARenewal_PriorityThreads_CompletesEveryMessage_TheBoundCountsEveryCore()
    {
        // CPU parts of 100 ms against a 1 s lease renewed every 50 ms, one worker of 4 slots: on a PriorityThreadPool with a thread per
        // core the CPU parts of several messages run at once, and a renewal waits for the first part that ends, never for all of them.
        // That it then keeps every lease is a claim about the machine's clock (the README's five-modes table: none refused); what holds
        // at any load is the accounting, and that the CPU bound counts one thread per core.
        string[] args = ["--time-scale", "1", "--messages", "8", "--steps", "2", "--cpu", "100ms", "--io", "1ms", "--renew-every", "50ms", "--lease", "1s", "--concurrency", "4", "--modes", "priority-threads"];

        RunResult result = await RunAsync([.. args, .. Bounded], s_fastReplies, s_boundedDeadline);
        CommandLine.TryParse(args, out Options options, out _).Should().BeTrue();

        result.End.Should().Be(RunEnd.Completed, Describe(result));
        result.AtEnd.Completed.Should().Be(8);
        ShouldAccountForEveryMessage(result, 8);
        result.Bound.Should().Be(Coordinator.Bound(options, "priority-threads"));
        if (Environment.ProcessorCount > 1)
        {
            result.Bound.Should().BeLessThan(Coordinator.Bound(options, "priority"), "the bound counts a thread per core, the priority mode's one");
        }
    }

    [Fact]
    public async Task CpuPartLongerThanTheLease_OnVirtualTime_SingleLosesEveryLease_PriorityWithCheckpointsKeepsThem()
    {
        // CPU parts of 600 ms against a 300 ms lease renewed every 50 ms: on one FIFO thread a renewal waits behind whole CPU parts, so
        // every delivery's first renewal comes after its lease ran out and it never completes; at the top priority level a renewal waits
        // behind one 10 ms slice. (Single gets no checkpoints: in a FIFO queue a checkpoint is a Task.Yield, which would let the renewal
        // through.)
        string[] args = ["--virtual-time", "--messages", "2", "--steps", "2", "--cpu", "600ms", "--io", "1ms", "--renew-every", "50ms", "--lease", "300ms", "--concurrency", "2"];

        RunResult single = await RunAsync([.. args, "--modes", "single"], s_fastReplies, TimeSpan.FromSeconds(10));
        RunResult priority = await RunAsync([.. args, "--modes", "priority", "--checkpoint", "10ms"], s_fastReplies);

        single.End.Should().Be(RunEnd.Deadline, "each delivery loses its lease and the broker delivers the message again, for ever: {0}", Describe(single));
        single.AtEnd.Completed.Should().Be(0);
        single.AtEnd.FailedRenewals.Should().BeGreaterThan(0, "the broker refused the late renewals");
        single.AtEnd.RejectedCompletes.Should().Be(0, "a delivery whose renewal was refused stops and never sends a complete");
        single.Seen.StoppedLeaseLost.Should().BeGreaterThan(0, "the worker stops a delivery whose renewal the broker refused")
            .And.BeLessThanOrEqualTo(single.Final.FailedRenewals);
        ShouldAccountForEveryMessage(single, 2);

        priority.End.Should().Be(RunEnd.Completed, Describe(priority));
        priority.AtEnd.Completed.Should().Be(2);
        priority.AtEnd.FailedRenewals.Should().Be(0);
        priority.AtEnd.Redelivered.Should().Be(0);
        priority.Seen.WorstRenewGapMs.Should().BeLessThanOrEqualTo(50 + 10, "the interval, plus the one slice running when it fell due");
    }

    [Fact]
    public async Task DefaultRun_OnVirtualTime_PriorityKeepsEveryLease_SingleLosesLeases_AsTheReadmeShows()
    {
        // The article's experiment, exactly: 8 messages of 5 steps (CPU 1 s, I/O 1 s), 4 in flight, renew every 2 s, lease 5 s,
        // replies after 250 ms. A priority renewal waits for at most the one CPU part running (3 s of slack); a FIFO renewal waits
        // behind the CPU part of every message in flight (up to 4 s). The figures are the README's table ("Virtual time").
        RunResult[] results = [.. await RunAllAsync(["--virtual-time"])];
        RunResult hang = await RunAsync(["--virtual-time", "--hang-message", "3", "--modes", "priority"]);
        IReadOnlyList<RunResult> checkpoints = await RunAllAsync(["--virtual-time", "--cpu", "2s", "--checkpoint", "250ms"]);

        results.Select(r => r.Mode).Should().Equal("priority", "single");
        RunResult priority = results[0];
        RunResult single = results[1];
        priority.End.Should().Be(RunEnd.Completed, Describe(priority));
        (priority.AtEnd.FailedRenewals, priority.AtEnd.Redelivered).Should().Be((0, 0));
        priority.Seen.WorstRenewGapMs.Should().Be(2500, "the 2 s interval, and at most one 1 s CPU part: never near the 5 s lease");
        priority.Makespan.Should().Be(TimeSpan.FromSeconds(46.5));
        priority.Bound.Should().Be(TimeSpan.FromSeconds(41));
        single.End.Should().Be(RunEnd.Completed, Describe(single));
        (single.AtEnd.FailedRenewals, single.AtEnd.Redelivered, single.AtEnd.Delivered).Should().Be((11, 11, 19), Describe(single));
        single.Seen.WorstRenewGapMs.Should().Be(7000, "behind the CPU parts of the 4 messages in flight");
        single.Makespan.Should().Be(TimeSpan.FromSeconds(66.76));

        hang.End.Should().Be(RunEnd.Completed, Describe(hang));
        (hang.Seen.StoppedNoProgress, hang.AtEnd.Redelivered, hang.AtEnd.FailedRenewals).Should().Be((1, 1, 0), Describe(hang));
        hang.Makespan.Should().Be(TimeSpan.FromSeconds(43.5));

        // CPU parts of 2 s cut into 250 ms slices: a renewal waits for one slice, in either mode (in a FIFO queue a checkpoint is a
        // Task.Yield, which lets the renewal through).
        checkpoints.Should().OnlyContain(r => r.End == RunEnd.Completed && r.AtEnd.FailedRenewals == 0 && r.AtEnd.Redelivered == 0, Describe(checkpoints));
        foreach (RunResult r in (RunResult[])[.. results, hang, .. checkpoints])
        {
            ShouldAccountForEveryMessage(r, 8);
        }
    }

    [Fact]
    public async Task VirtualRun_SameSettingsTwice_GivesTheSameResultToTheTick()
    {
        string[] args = ["--virtual-time", "--messages", "6", "--steps", "4", "--cpu", "1300ms", "--checkpoint", "300ms"];

        RunResult[] first = [.. await RunAllAsync(args)];
        RunResult[] second = [.. await RunAllAsync(args)];

        // Everything but the CPU time the process spent (real, not virtual).
        first.Select(r => r with { Seen = r.Seen with { CpuMs = 0 } }).Should().Equal(second.Select(r => r with { Seen = r.Seen with { CpuMs = 0 } }));
    }

    [Theory]
    [InlineData("--workers 0", "--workers must be from 1 to 64 (got 0).")]
    [InlineData("--lease 1s --renew-every 2s", "--lease (1 s) must be longer than the renewal interval --renew-every (2 s)")]
    [InlineData("--modes fifo", "unknown mode 'fifo'; the modes are priority, single, threadpool, heartbeat-thread, priority-threads.")]
    [InlineData("--modes ,", "--modes needs at least one mode.")]
    [InlineData("--modes priority --modes single", "--modes is given more than once (see --help).")]
    [InlineData("--time-scale 1e308", "--time-scale must be a number in (0, 10] (got 1E+308).")]
    [InlineData("--cpu 0ms --io 0ms", "there is no work to schedule.")]
    [InlineData("--messages 1000000 --steps 10000", "days of work as it runs; at most 1 day.")]
    [InlineData("--stall-after -1s", "--stall-after must be positive (got -1000 ms).")]
    [InlineData("--cpu fast", "--cpu must be a duration such as 250ms or 1.5s (got 'fast').")]
    [InlineData("--bus postgres --connection Host=127.0.0.1;Port=notaport", "The PostgreSQL connection string is malformed")]
    [InlineData("--bus redis --connection 127.0.0.1:6379,nosuchkeyword=1", "The Redis connection string is malformed")]
    [InlineData("--bus redis --connection password=x", "The Redis connection string names no server (host:port).")]
    [InlineData("--bus kafka", "--bus must be memory, postgres, redis or rabbitmq (got 'kafka').")]
    [InlineData("--latency 1ms", "unknown option '--latency' (see --help).")]
    [InlineData("--virtual-time --bus postgres", "--virtual-time runs on the in-memory broker only (got --bus postgres)")]
    [InlineData("--virtual-time --workers 2", "--virtual-time runs one worker (got --workers 2)")]
    [InlineData("--virtual-time --modes priority,threadpool", "--modes threadpool cannot run with --virtual-time")]
    [InlineData("--virtual-time --bus-cost", "--bus-cost measures the machine: it runs in real time only")]
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
        // The run a newcomer starts first (no arguments: the five modes, in memory), once, at a tenth of its time scale (0.01: a CPU
        // part of 10 ms, a lease of 50 ms) so that it takes seconds on a busy machine; the reports are written from its results. Which
        // modes keep their leases depends on how busy the cores are (the README's tables measure it; on virtual time the test above
        // proves it); what holds at any load is the accounting: every message in one state, each completed at most once, and a run that
        // ends only when done or stopped.
        CommandLine.TryParse([], out Options defaults, out string? error).Should().BeTrue(error);
        Options options = defaults with { TimeScale = defaults.TimeScale / 10 };
        IReadOnlyList<RunResult> results = await new Coordinator(options, TextWriter.Null).RunMemoryAsync();
        var table = new StringWriter();
        var wide = new StringWriter();
        Table.Write(table, options, results);
        Table.Write(wide, options with { Wide = true }, results);

        results.Select(r => r.Mode).Should().Equal(Options.AllModes);
        results.Should().OnlyContain(r => r.End != RunEnd.WorkersExited, "a run ends done or stopped, not by its workers giving up: {0}", Describe(results));
        foreach (RunResult r in results)
        {
            ShouldAccountForEveryMessage(r, options.Messages);
        }

        string[] lines = table.ToString().ReplaceLineEndings("\n").Split('\n');
        lines.Should().OnlyContain(l => l.Length <= 120);
        table.ToString().Should().Contain("The lease-worker experiment of the article \"Async Wandering, part 15\"");
        ShouldDefineEveryColumn(lines);
        string modes = string.Join(' ', lines.SkipWhile(l => !l.StartsWith("  The modes.", StringComparison.Ordinal)));
        Options.AllModes.Should().OnlyContain(m => modes.Contains($" {m}: "), "the paragraph below the table says what each mode is");
        ShouldDefineEveryColumn(wide.ToString().ReplaceLineEndings("\n").Split('\n'));
    }

    [Theory]
    [InlineData("postgres")]
    [InlineData("redis")]
    public void WorkerOptions_EveryMode_TravelInTheEnvironmentAndArriveAtTheCoordinatorsQueue(string bus)
    {
        // A worker process gets its settings as JSON in BROKERWORKER_WORKER (its connection string in the broker's own variable): it
        // must arrive at the coordinator's queue, with its share of the cores, and never see the connection string in the settings.
        CommandLine.TryParse(["--bus", bus, "--workers", "4", "--connection", bus == "redis" ? "127.0.0.1:1,password=pw" : "Host=h;Password=pw"], out Options parsed, out string? error)
            .Should().BeTrue(error);
        Options coordinator = parsed with { Queue = "t_prefix" };

        foreach (string mode in Options.AllModes)
        {
            Options sent = Coordinator.WorkerOptions(coordinator, mode);
            Options worker = System.Text.Json.JsonSerializer.Deserialize<Options>(System.Text.Json.JsonSerializer.Serialize(sent))!;
            worker.WorkerMode.Should().Be(mode);
            worker.Connection.Should().BeNull("the connection string travels in the broker's variable, never in the settings");
            BusFactory.Table(worker, worker.WorkerMode).Should().Be(BusFactory.Table(coordinator, mode));
            worker.CoreShare.Should().Be(coordinator.CoreShare, "each worker process's pool is its share of the cores");
            worker.Validate().Should().BeNull();
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(8)]
    public void CoreShare_WorkerProcesses_DivideTheCoresAtLeastOneThreadEach(int workers)
    {
        CommandLine.TryParse(["--workers", workers.ToString(System.Globalization.CultureInfo.InvariantCulture)], out Options options, out string? error).Should().BeTrue(error);

        options.CoreShare.Should().Be(Math.Max(1, Environment.ProcessorCount / workers));
        (options.CoreShare * workers).Should().BeLessThanOrEqualTo(Math.Max(workers, Environment.ProcessorCount), "no more pool threads than cores, but one per process");
        options.CreateMode("priority-threads").CpuThreads(CpuKind.Spin).Should().Be(options.CoreShare, "the CPU bound counts the threads the pools have");
    }

    [Fact]
    public async Task Redis_NothingListening_OneLineNamingHostAndPort_NeverThePassword_ExitCode2()
    {
        (int exit, _, string stderr) = await RunAppAsync(["--bus", "redis", "--connection", "127.0.0.1:1,password=hunter2,connectTimeout=2000"]);

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
            ["--bus", "postgres", "--connection", "Host=127.0.0.1;Port=1;Database=queue_db;Username=worker;Password=hunter2;Timeout=2"]);

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

    private static string Describe(IReadOnlyList<RunResult> results) => string.Join("; ", results.Select(Describe));

    private static string Describe(RunResult r) =>
        $"{r.Mode}: {r.End}, {r.AtEnd.Completed} of {r.AtEnd.Enqueued} completed in {r.Makespan.TotalSeconds:0.000} s, {r.AtEnd.Redelivered} delivered again, " +
        $"{r.AtEnd.FailedRenewals} renewals refused, {r.AtEnd.RejectedCompletes} completes refused, stopped {r.Seen.StoppedLeaseLost} lease lost / {r.Seen.StoppedNoProgress} no progress";

    /// <summary>
    /// What holds at any load, by the broker's counts after the workers stopped: every message in exactly one state, completed at most
    /// once, every completion the broker accepted one a worker was told it made (in memory no reply is lost), and fencing: a delivery
    /// sends at most one complete and the broker accepts one per message, so the refused ones come from deliveries that did not
    /// complete their message.
    /// </summary>
    internal static void ShouldAccountForEveryMessage(RunResult r, int messages)
    {
        string what = Describe(r);
        r.Final.Enqueued.Should().Be(messages, what);
        (r.Final.Completed + r.Final.Available + r.Final.Leased).Should().Be(messages, what);
        r.Final.Completed.Should().BeLessThanOrEqualTo(r.Final.Delivered, what);
        r.Final.Completed.Should().BeGreaterThanOrEqualTo(r.AtEnd.Completed, what);
        r.Seen.Completed.Should().Be(r.Final.Completed, "every completion the broker accepted is one a worker made: {0}", what);
        r.Final.RejectedCompletes.Should().BeLessThanOrEqualTo(r.Final.Delivered - r.Final.Completed, what);
        if (r.End == RunEnd.Completed)
        {
            r.AtEnd.Completed.Should().Be(messages, what);
        }
    }

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
    public async Task ServerNeverAnswers_RetriedThenOneLineSayingSo_ExitCode2()
    {
        // A port that accepts connections and never says a word: each attempt ends at the connect timeout, and since something
        // accepts connections there (a busy server, as far as the client can tell), the queue retries for its 30 s first.
        using var silent = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        silent.Start();
        int port = ((System.Net.IPEndPoint)silent.LocalEndpoint).Port;

        (int exit, _, string stderr) = await RunAppAsync(
            ["--bus", "postgres", "--connection", $"Host=127.0.0.1;Port={port};Database=queue_db;Username=worker;Password=hunter2;Timeout=1"]);

        exit.Should().Be(2);
        stderr.TrimEnd().Split('\n').Should().ContainSingle();
        stderr.TrimEnd().Should().MatchRegex(
            $@"^BrokerWorker: Cannot connect to PostgreSQL at 127\.0\.0\.1:{port}, database 'queue_db', user 'worker': the server accepts " +
            @"connections but the session did not start within the connect timeout \(1 s\): a busy machine or server, or not a PostgreSQL " +
            @"server \(still failing after retrying for [0-9.]+ s\)$");
    }

    private static async Task<RunResult> RunAsync(string[] args, TimeSpan? replies = null, TimeSpan? deadline = null) =>
        (await RunAllAsync(args, replies, deadline)).Should().ContainSingle().Subject;

    /// <summary>The command line's run, with what the command line does not carry: the in-memory broker's reply time, a deadline.</summary>
    private static async Task<IReadOnlyList<RunResult>> RunAllAsync(string[] args, TimeSpan? replies = null, TimeSpan? deadline = null)
    {
        CommandLine.TryParse(args, out Options options, out string? error).Should().BeTrue(error);
        options = options with { MemoryLatency = replies ?? options.MemoryLatency, Deadline = deadline };
        return await new Coordinator(options, TextWriter.Null).RunMemoryAsync();
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
