using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using BrokerWorker.Bus;
using BrokerWorker.Processes;

namespace BrokerWorker.Report;

/// <summary>
/// <c>--scaling 1,2,4,8</c>: two experiments over several worker-process counts on one bus, each a normal run of the coordinator.
/// Small messages: 2000 messages of one 10 ms I/O part and no CPU, 16 in flight per process, priority mode: what the broker and
/// the processes cost per message. The article's experiment: 150 of its messages produced at 3 per second of the article's time, at
/// --time-scale (by default 0.1: 30 per second, 500 ms leases), priority and priority-threads: what is lost when processes share the
/// cores.
/// </summary>
public static class Scaling
{
    public static async Task<int> RunAsync(Options options, TextWriter output, TextWriter error)
    {
        string? connection = null;
        if (options.Bus != "memory")
        {
            connection = BusFactory.ConnectionString(options, out string? problem);
            if (connection is null)
            {
                await error.WriteLineAsync($"BrokerWorker: {problem}");
                return 2;
            }
        }

        var small = new List<RunResult>();
        var seed = new List<RunResult>();
        foreach (int workers in options.Scaling)
        {
            IReadOnlyList<RunResult>? results = await RunAsync(SmallMessages(options, workers), connection, error);
            if (results is null)
            {
                return 2;
            }

            small.AddRange(results);
            results = await RunAsync(SeedExperiment(options, workers), connection, error);
            if (results is null)
            {
                return 2;
            }

            seed.AddRange(results);
        }

        if (options.Json)
        {
            foreach (RunResult r in small.Concat(seed))
            {
                output.WriteLine(System.Text.Json.JsonSerializer.Serialize(r));
            }

            return 0;
        }

        output.WriteLine($"Broker: {options.BusName}; {Environment.ProcessorCount} cores; CPU: the worker processes' (in memory: this process's) / the broker server's.");
        output.WriteLine();
        output.WriteLine("Small messages: 2000 messages, one 10 ms I/O part each, no CPU, 16 in flight per process, priority mode.");
        output.WriteLine();
        string processes = options.Bus == "memory" ? "workers (one process)" : "processes";
        output.WriteLine($"| {processes} | took | messages/s | CPU workers | CPU broker | end |");
        output.WriteLine("|---|---|---|---|---|---|");
        foreach (RunResult r in small)
        {
            output.WriteLine($"| {r.Workers} | {Format.Sec(r.Makespan)} | {(r.AtEnd.Completed / r.Makespan.TotalSeconds).ToString("0", CultureInfo.InvariantCulture)} | " +
                $"{Cpu(r.Seen.CpuMs)} | {(r.BrokerCpu is { } b ? Format.Sec(b) : "-")} | {End(r)} |");
        }

        output.WriteLine();
        Options experiment = SeedExperiment(options, 1);
        output.WriteLine(
            $"The article's experiment: {experiment.Messages} messages at {experiment.Rate.ToString("0.##", CultureInfo.InvariantCulture)}/s, " +
            $"{experiment.Steps} steps of CPU {Format.Seed(experiment.Scaled(experiment.Cpu))} + I/O {Format.Seed(experiment.Scaled(experiment.Io))}, " +
            $"renew every {Format.Seed(experiment.Scaled(experiment.RenewEvery))}, lease {Format.Seed(experiment.Scaled(experiment.Lease))}.");
        output.WriteLine();
        output.WriteLine($"| {processes} | mode | threads each | renewals refused | delivered again | longest without renewal | took | vs least possible | CPU workers | CPU broker | end |");
        output.WriteLine("|---|---|---|---|---|---|---|---|---|---|---|");
        foreach (RunResult r in seed)
        {
            string threads = r.Mode == "priority-threads" ? Math.Max(1, Environment.ProcessorCount / r.Workers).ToString(CultureInfo.InvariantCulture) : "1";
            output.WriteLine($"| {r.Workers} | {r.Mode} | {threads} | {r.AtEnd.FailedRenewals} | {r.AtEnd.Redelivered} | {r.Seen.WorstRenewGapMs:0} ms | " +
                $"{Format.Sec(r.Makespan)} | {r.Ratio.ToString("0.00", CultureInfo.InvariantCulture)}x | {Cpu(r.Seen.CpuMs)} | {(r.BrokerCpu is { } c ? Format.Sec(c) : "-")} | {End(r)} |");
        }

        return 0;
    }

    /// <summary>The small-messages run for <paramref name="workers"/> processes, on the bus and queue of <paramref name="options"/>.</summary>
    public static Options SmallMessages(Options options, int workers) => new()
    {
        Bus = options.Bus,
        Connection = options.Connection,
        Queue = options.Queue,
        Workers = workers,
        Modes = ["priority"],
        Messages = 2000,
        Steps = 1,
        Cpu = TimeSpan.Zero,
        Io = TimeSpan.FromMilliseconds(10),
        TimeScale = 1,
        Concurrency = 16,
        MemoryLatency = TimeSpan.Zero,
    };

    /// <summary>The article's experiment for <paramref name="workers"/> processes: 150 messages produced at 3 per second of the article's
    /// time, at the time scale of <paramref name="options"/> (0.1 by default: 30 per second).</summary>
    public static Options SeedExperiment(Options options, int workers) => new()
    {
        Bus = options.Bus,
        Connection = options.Connection,
        Queue = options.Queue,
        Workers = workers,
        Modes = ["priority", "priority-threads"],
        Messages = 150,
        TimeScale = options.TimeScale,
        Rate = Math.Round(3 / options.TimeScale, 6), // 30 at the default 0.1, not 30.000000000000004
    };

    private static async Task<IReadOnlyList<RunResult>?> RunAsync(Options options, string? connection, TextWriter error)
    {
        var coordinator = new Coordinator(options, error);
        return connection is null ? await coordinator.RunMemoryAsync() : await coordinator.RunBrokerAsync(connection);
    }

    private static string Cpu(double ms) => Format.Sec(TimeSpan.FromMilliseconds(ms));

    private static string End(RunResult r) => r.End == RunEnd.Completed ? "all completed" : $"stopped ({r.End}): {r.AtEnd.Completed} of {r.AtEnd.Enqueued}";
}
