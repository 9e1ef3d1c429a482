using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using BrokerWorker.Bus;
using BrokerWorker.Processing;
using LeaseWorker.Core;

namespace BrokerWorker;

/// <summary>
/// The run's parameters. Durations are given in the seed's time (the lease-worker article's numbers: CPU 1 s and I/O 1 s per step,
/// renewal every 2 s, lease 5 s) and run scaled by <see cref="TimeScale"/>, so that the ratios, which decide what is lost, stay the
/// seed's while a run takes seconds.
/// </summary>
public sealed record Options
{
    /// <summary>The values of <c>--bus</c>: the in-memory bus, then every real broker (<see cref="BusFactory.Kinds"/>).</summary>
    public static readonly string[] Buses = ["memory", .. BusFactory.Kinds.Select(k => k.Bus)];

    public static readonly string[] AllModes = ["priority", "single", "threadpool", "heartbeat-thread", "priority-threads"];

    /// <summary>The modes that can run on virtual time: the ones on one loop, which can tell when it has nothing to run.</summary>
    public static readonly string[] VirtualTimeModes = ["priority", "single"];

    public string Bus { get; init; } = "memory";

    public string? Connection { get; init; }

    public IReadOnlyList<string> Modes { get; init; } = AllModes;

    public int Workers { get; init; } = 1;

    /// <summary>Messages per run: 8 (with <see cref="Steps"/> 5, the runs measured in the README, a few seconds per mode).</summary>
    public int Messages { get; init; } = 8;

    public int Steps { get; init; } = 5;

    /// <summary>Messages in flight per worker process.</summary>
    public int Concurrency { get; init; } = 4;

    public TimeSpan Cpu { get; init; } = TimeSpan.FromSeconds(1);

    public TimeSpan Io { get; init; } = TimeSpan.FromSeconds(1);

    public TimeSpan RenewEvery { get; init; } = TimeSpan.FromSeconds(2);

    public TimeSpan Lease { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>The in-memory bus's reply latency (the seed's refresh took 250 ms); a real broker takes what it takes. Not on the
    /// command line: the tests shorten it.</summary>
    public TimeSpan MemoryLatency { get; init; } = TimeSpan.FromMilliseconds(250);

    /// <summary>Slice of a CPU part between two checkpoints; null: whole parts.</summary>
    public TimeSpan? Checkpoint { get; init; }

    public double TimeScale { get; init; } = 0.1;

    /// <summary>The K-th message produced (payload <c>message K</c>, from 1) whose first delivery never finishes processing; 0: none.</summary>
    public long HangMessage { get; init; }

    /// <summary>The coordinator ends a run with no completion or delivery for this long (real time) as stalled; null: <see cref="DefaultStallAfter"/>.</summary>
    public TimeSpan? StallAfter { get; init; }

    /// <summary>The coordinator ends a run that has not completed by then (real time); null: 3 times the CPU bound plus the stall
    /// time. Not on the command line: the tests set it.</summary>
    public TimeSpan? Deadline { get; init; }

    /// <summary>
    /// Each worker's share of the cores: the cores divided among the workers, at least one. Priorities order work inside a
    /// process, not across processes: N processes whose pools each take every core run N threads per core, and the operating
    /// system, not the priority levels, decides when a renewal runs.
    /// </summary>
    public int CoreShare => Math.Max(1, Environment.ProcessorCount / Workers);

    /// <summary>The broker's name for people.</summary>
    public string BusName => BusFactory.Kind(Bus)?.Name ?? "in memory";

    /// <summary>The prefix of the queues, each mode's queue is PREFIX_MODE. Not on the command line: the tests give each run its own.</summary>
    public string Queue { get; init; } = "broker_worker";

    public bool BusCost { get; init; }

    /// <summary>How long each round of --bus-cost measures. Not on the command line: the tests run short rounds.</summary>
    public TimeSpan BusCostDuration { get; init; } = TimeSpan.FromSeconds(3);

    public bool Json { get; init; }

    /// <summary>
    /// --virtual-time: each mode's run on a clock of its own (PriorityAsync's VirtualTimeProvider) instead of the machine's: every CPU
    /// part advances it, the in-memory broker judges leases by it and replies on it, every wait of the worker is a timer on it, and
    /// the mode's loop jumps it to its next timer when it has nothing to run. The results are exact, the same at any load, and a
    /// run takes milliseconds. The in-memory broker, one worker, the modes on one loop (<see cref="VirtualTimeModes"/>).
    /// </summary>
    public bool VirtualTime { get; init; }

    /// <summary>--wide: the full table instead of the one that fits 120 columns.</summary>
    public bool Wide { get; init; }

    /// <summary>--help or --version: the text to print (the generated help, or the version), then exit 0; null: run.</summary>
    public string? Show { get; init; }

    /// <summary>Worker processes: the worker's mode.</summary>
    public string WorkerMode => Modes[0];

    /// <summary>
    /// The threadpool mode's minimum threads: what an uncompressed run ends up with, one per message in flight (each may block one
    /// in a CPU part) plus one per core for the renewals and I/O completions (see <see cref="ThreadPoolMode"/>).
    /// </summary>
    public int PoolMinThreads => (Concurrency * (Bus == "memory" ? Workers : 1)) + Environment.ProcessorCount + 2;

    /// <summary>The mode named <paramref name="name"/>, for this run (a new object: a mode holds the state of one run).</summary>
    public Mode CreateMode(string name) => name switch
    {
        "priority" => new PriorityMode(),
        "single" => new SingleThreadMode(),
        "threadpool" => new ThreadPoolMode(PoolMinThreads),
        "heartbeat-thread" => new HeartbeatThreadMode(),
        PriorityThreadsMode.ModeName => new PriorityThreadsMode(CoreShare),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"The modes are {string.Join(", ", AllModes)}."),
    };

    public TimeSpan Scaled(TimeSpan seed) => TimeSpan.FromTicks((long)Math.Round(seed.Ticks * TimeScale));

    public TimeSpan ScaledCpu => Scaled(Cpu);

    public int SlicesPerCpuPart => Checkpoint is { } slice && slice > TimeSpan.Zero && Cpu > slice ? (int)Math.Ceiling(Cpu / slice) : 1;

    /// <summary>The priority modes stop renewing a message whose external call has not answered for two leases.</summary>
    public TimeSpan ScaledProgressTimeout => Scaled(Lease * 2);

    public TimeSpan ScaledStallAfter => StallAfter ?? DefaultStallAfter;

    /// <summary>
    /// The longest a healthy message may take from its delivery to its completion (as it runs): each of its steps' CPU parts waits
    /// behind the CPU part of every other message in flight on its core. In the single-thread modes a worker's messages share one
    /// thread, and worker processes beyond the cores share cores.
    /// </summary>
    public TimeSpan SlowestMessage
    {
        get
        {
            int processesPerCore = (Workers + Environment.ProcessorCount - 1) / Environment.ProcessorCount;
            return Steps * ((Concurrency * processesPerCore * ScaledCpu) + Scaled(Io));
        }
    }

    /// <summary>
    /// The stall limit without --stall-after: the longest of 8 leases, 3 times <see cref="SlowestMessage"/> and 3 s. The only
    /// progress the coordinator sees is a delivery or a completion, and once the first messages are delivered the next one is the
    /// first completion, a whole message later. 8 leases alone (4 s at the default time scale) was shorter than 4 messages of 10
    /// steps interleaved on one thread (4 s of CPU parts before the first completes) and ended healthy runs as stalled. Three
    /// times the slowest message leaves room for a machine whose cores are busy with something else.
    /// </summary>
    public TimeSpan DefaultStallAfter
    {
        get
        {
            TimeSpan limit = Scaled(Lease) * 8;
            limit = SlowestMessage * 3 > limit ? SlowestMessage * 3 : limit;
            return limit > TimeSpan.FromSeconds(3) ? limit : TimeSpan.FromSeconds(3);
        }
    }

    /// <summary>Checks the settings; returns one line when they cannot make a meaningful run.</summary>
    public string? Validate()
    {
        if (!Buses.Contains(Bus))
        {
            return $"--bus must be {string.Join(", ", Buses)} (got '{Bus}').";
        }

        if (Workers is < 1 or > 64)
        {
            return $"--workers must be from 1 to 64 (got {Workers}).";
        }

        if (Messages is < 1 or > 1_000_000)
        {
            return $"--messages must be from 1 to 1000000 (got {Messages}).";
        }

        if (Steps is < 1 or > 10_000)
        {
            return $"--steps must be from 1 to 10000 (got {Steps}).";
        }

        if (Concurrency is < 1 or > 1000)
        {
            return $"--concurrency must be from 1 to 1000 (got {Concurrency}).";
        }

        if (double.IsNaN(TimeScale) || double.IsInfinity(TimeScale) || TimeScale <= 0 || TimeScale > 10)
        {
            return $"--time-scale must be a number in (0, 10] (got {TimeScale.ToString(CultureInfo.InvariantCulture)}).";
        }

        if (Cpu < TimeSpan.Zero || Io < TimeSpan.Zero)
        {
            return "--cpu and --io must not be negative.";
        }

        if (ScaledCpu == TimeSpan.Zero && Scaled(Io) == TimeSpan.Zero)
        {
            return "--cpu and --io are both 0 as they run: there is no work to schedule.";
        }

        double workDays = (double)Messages * Steps * (ScaledCpu + Scaled(Io)).TotalDays;
        if (workDays > 1)
        {
            return $"--messages x --steps x (CPU + I/O part) make {workDays:0.#} days of work as it runs; at most 1 day.";
        }

        if (Scaled(RenewEvery) < TimeSpan.FromMilliseconds(1))
        {
            return $"--renew-every must be at least 1 ms as it runs (got {Format.Ms(Scaled(RenewEvery))} after --time-scale).";
        }

        if (Lease <= RenewEvery)
        {
            return $"--lease ({Format.Seed(Lease)}) must be longer than the renewal interval --renew-every ({Format.Seed(RenewEvery)}), or every lease expires between two renewals.";
        }

        if (Scaled(Lease) > TimeSpan.FromDays(1))
        {
            return $"--lease must be at most 1 day as it runs (got {Format.Seed(Scaled(Lease))}).";
        }

        if (Checkpoint is { } checkpoint && checkpoint <= TimeSpan.Zero)
        {
            return $"--checkpoint must be positive, or off (got {Format.Seed(checkpoint)}).";
        }

        if (HangMessage < 0)
        {
            return $"--hang-message must be a message id from 1, or 0 for none (got {HangMessage}).";
        }

        if (VirtualTime && VirtualTimeProblem() is { } problem)
        {
            return problem;
        }

        return StallAfter is { } stall && stall <= TimeSpan.Zero ? $"--stall-after must be positive (got {Format.Seed(stall)})." : null;
    }

    // Virtual time is driven by one loop: the workers' one loop thread must be able to tell when the whole run is idle.
    private string? VirtualTimeProblem()
    {
        if (Bus != "memory")
        {
            return $"--virtual-time runs on the in-memory broker only (got --bus {Bus}): a real server keeps the machine's time.";
        }

        if (Workers != 1)
        {
            return $"--virtual-time runs one worker (got --workers {Workers}): one loop drives the clock, and each worker has a loop of its own.";
        }

        if (Modes.FirstOrDefault(m => !VirtualTimeModes.Contains(m)) is { } realOnly)
        {
            return $"--modes {realOnly} cannot run with --virtual-time: it runs the modes on one loop ({string.Join(", ", VirtualTimeModes)}); " +
                "the thread pool's, a heartbeat thread's and a PriorityThreadPool's threads cannot tell when the whole run is idle.";
        }

        if (BusCost)
        {
            return "--bus-cost measures the machine: it runs in real time only (drop --virtual-time).";
        }

        return null;
    }

    public string Describe() =>
        $"{Messages} messages x {Steps} steps of CPU {Format.Seed(Cpu)} + I/O {Format.Seed(Io)}; renew every {Format.Seed(RenewEvery)}, " +
        $"lease {Format.Seed(Lease)}; " +
        (SlicesPerCpuPart > 1 ? $"CPU parts cut into {SlicesPerCpuPart} slices of {Format.Seed(Checkpoint!.Value)} with a checkpoint between them" : "CPU parts run whole (no checkpoints)") +
        $"; {Concurrency} messages in flight per worker; time scale {TimeScale.ToString(CultureInfo.InvariantCulture)}: every duration runs " +
        $"{TimeScale.ToString(CultureInfo.InvariantCulture)} times as long (a lease: {Format.Ms(Scaled(Lease))})" +
        (HangMessage > 0 ? $"; message {HangMessage} hangs on its first delivery" : "") +
        (VirtualTime ? "; on virtual time (every duration exact, CPU parts included)" : "");
}
