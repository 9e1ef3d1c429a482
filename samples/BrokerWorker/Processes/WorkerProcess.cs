using System;
using System.IO;
using System.Linq;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using BrokerWorker.Bus;
using BrokerWorker.Processing;
using Microsoft.Extensions.Hosting;

namespace BrokerWorker.Processes;

/// <summary>
/// One worker process on a real broker's queue, started by the coordinator with its settings in <see cref="Variable"/> (the
/// program runs this role when the variable is set). Its queue is the coordinator's: the same prefix and mode (<see cref="BusFactory.Table"/>).
/// Protocol on the standard streams: it connects, prints <c>ready</c>, waits for the line <c>go</c>; then works until the queue is
/// done and prints one JSON line of its statistics. End of input (the coordinator closed it, or died) stops it gracefully: the
/// messages in flight are abandoned, so another process takes them at once.
/// </summary>
public static class WorkerProcess
{
    /// <summary>The environment variable that makes a process a worker: its <see cref="Options"/> as JSON.</summary>
    public const string Variable = "BROKERWORKER_WORKER";

    /// <summary>Runs the worker on <paramref name="connection"/>, the connection string the coordinator put in the broker's variable.</summary>
    public static async Task<int> RunAsync(Options options, string connection, TextWriter output, TextWriter error)
    {
        string queueName = BusFactory.Table(options, options.WorkerMode);
        await using Broker broker = BusFactory.Create(connection, options, queueName, options.WorkerMode);
        bool ready = await BusFactory.TryAsync(() => broker.SetUpAsync(purge: false), broker, $"open the queue {queueName}", error);
        if (!ready)
        {
            return 2;
        }

        await output.WriteLineAsync("ready");
        await output.FlushAsync();
        if (Console.In.ReadLine() != "go")
        {
            return 0;
        }

        using IHost host = WorkerHost.Build(broker.Bus, options, options.WorkerMode, workers: 1);
        var lifetime = (IHostApplicationLifetime)host.Services.GetService(typeof(IHostApplicationLifetime))!;
        var stdin = new Thread(() =>
        {
            while (Console.In.ReadLine() is not null)
            {
            }

            lifetime.StopApplication();
        })
        { IsBackground = true, Name = "stdin" };
        stdin.Start();

        var group = (WorkerGroup)host.Services.GetService(typeof(WorkerGroup))!;
        await host.StartAsync();
        await host.WaitForShutdownAsync();
        await output.WriteLineAsync(JsonSerializer.Serialize(ProcessStats.From(group.Stats, broker.Reconnects, System.Diagnostics.Process.GetCurrentProcess().TotalProcessorTime)));
        await output.FlushAsync();
        return 0;
    }
}

/// <summary>One worker process's view, sent to the coordinator as JSON.</summary>
/// <param name="CpuMs">The process's CPU time at its end (all its threads); with the in-memory bus, the coordinator's during the run.</param>
/// <param name="Processes">How many processes' views these are: 1 from a process; summed, the worker processes that reported (a
/// process killed, or stopped too slowly, sends none).</param>
public sealed record ProcessStats(long StoppedLeaseLost, long StoppedNoProgress, long RejectedByBroker, long Completed, long ConnectionErrors, long Reconnects, double WorstRenewGapMs, int PeakThreads, double CpuMs, int Processes = 1)
{
    public static ProcessStats From(System.Collections.Generic.IReadOnlyList<WorkerStats> stats, long reconnects, TimeSpan cpu) => new(
        stats.Sum(s => s.StoppedLeaseLost),
        stats.Sum(s => s.StoppedNoProgress),
        stats.Sum(s => s.RejectedByBroker),
        stats.Sum(s => s.Completed),
        stats.Sum(s => s.ConnectionErrors),
        reconnects,
        stats.Count == 0 ? 0 : stats.Max(s => s.WorstRenewGap.TotalMilliseconds),
        stats.Count == 0 ? 0 : stats.Max(s => s.PeakThreads),
        cpu.TotalMilliseconds);

    public static ProcessStats Sum(System.Collections.Generic.IEnumerable<ProcessStats> all)
    {
        ProcessStats[] a = all.ToArray();
        return new(
            a.Sum(s => s.StoppedLeaseLost),
            a.Sum(s => s.StoppedNoProgress),
            a.Sum(s => s.RejectedByBroker),
            a.Sum(s => s.Completed),
            a.Sum(s => s.ConnectionErrors),
            a.Sum(s => s.Reconnects),
            a.Length == 0 ? 0 : a.Max(s => s.WorstRenewGapMs),
            a.Length == 0 ? 0 : a.Max(s => s.PeakThreads),
            a.Sum(s => s.CpuMs),
            a.Sum(s => s.Processes));
    }
}
