using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using BrokerWorker.Bus;
using BrokerWorker.Processing;
using BrokerWorker.Report;
using LeaseWorker.Core;
using MessageBus;
using Microsoft.Extensions.Hosting;
using PriorityAsync;

namespace BrokerWorker.Processes;

/// <summary>
/// Runs each mode in turn: the queue is filled, the workers start together, and the run ends when the broker has
/// completed every message, or when no message was completed or delivered for <see cref="Options.ScaledStallAfter"/> (a zombie lease holds one),
/// or when every worker exited, or at a <see cref="Deadline"/>. The makespan is measured from the workers' common start to the
/// broker's last completion; the counts are read from the broker.
/// </summary>
public sealed class Coordinator(Options options, TextWriter error)
{
    private static readonly TimeSpan Poll = TimeSpan.FromMilliseconds(10);

    /// <summary>The memory run: the workers are hosted workers in this process (an in-memory broker cannot be shared); with
    /// --virtual-time, one worker on the mode's loop, on a clock of its own.</summary>
    public async Task<IReadOnlyList<RunResult>> RunMemoryAsync()
    {
        var results = new List<RunResult>();
        foreach (string mode in options.Modes)
        {
            results.Add(options.VirtualTime ? await RunVirtualAsync(mode) : await RunHostedAsync(mode));
        }

        return results;
    }

    /// <summary>The run on a real broker (PostgreSQL, Redis, RabbitMQ): N worker processes per mode. Returns null after writing one line when the broker cannot be used.</summary>
    public async Task<IReadOnlyList<RunResult>?> RunBrokerAsync(string connection)
    {
        var results = new List<RunResult>();
        foreach (string mode in options.Modes)
        {
            string queueName = BusFactory.Table(options, mode);
            await using Broker broker = BusFactory.Create(connection, options, queueName, "coordinator");
            bool ready = await BusFactory.TryAsync(
                async () =>
                {
                    await broker.SetUpAsync(purge: true);
                    await broker.EnqueueAsync(Payloads());
                },
                broker,
                $"set up the queue {queueName}",
                error);
            if (!ready)
            {
                return null;
            }

            List<WorkerChild> children = [];
            try
            {
                for (int i = 0; i < options.Workers; i++)
                {
                    children.Add(WorkerChild.Start(WorkerOptions(options, mode), connection));
                }

                foreach (WorkerChild child in children)
                {
                    if (!await child.WaitReadyAsync(TimeSpan.FromSeconds(60)))
                    {
                        await error.WriteLineAsync($"BrokerWorker: a worker process did not start: {child.Describe()}");
                        return null;
                    }
                }

                long start = Stopwatch.GetTimestamp();
                foreach (WorkerChild child in children)
                {
                    child.Go();
                }

                (TimeSpan makespan, RunEnd end) = await WaitAsync(broker.Bus, TimeProvider.System, start, Deadline(options, mode), () => children.All(c => c.HasExited));
                BusCounts atEnd = await broker.Bus.GetCountsAsync();

                // Stop the workers still running (a stalled run): end of input is their graceful stop; a hung one is killed.
                foreach (WorkerChild child in children)
                {
                    child.Stop();
                }

                List<ProcessStats> stats = [];
                foreach (WorkerChild child in children)
                {
                    await child.WaitForExitAsync(TimeSpan.FromSeconds(15));
                    if (child.Stats is { } s)
                    {
                        stats.Add(s);
                    }
                }

                // Redis: a lease that lapsed while the workers stopped is back in the queue after the next stalled check, not at
                // once; the final counts are read as they are (an expired lease still counts as leased, as on PostgreSQL).
                results.Add(new RunResult(mode, options.Workers, options.Bus, makespan, end, atEnd, await broker.Bus.GetCountsAsync(),
                    ProcessStats.Sum(stats), Bound(options, mode), (options.CreateMode(mode) as ThreadPoolMode)?.MinThreads));
            }
            finally
            {
                foreach (WorkerChild child in children)
                {
                    child.Dispose();
                }
            }
        }

        return results;
    }

    /// <summary>One mode in memory, in real time: the workers are hosted workers of one Generic Host in this process.</summary>
    private async Task<RunResult> RunHostedAsync(string mode)
    {
        var bus = new InMemoryMessageBus(options.Scaled(options.MemoryLatency));
        Fill(bus);
        using IHost host = WorkerHost.Build(bus, options, mode, options.Workers);
        TimeSpan cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
        long start = Stopwatch.GetTimestamp();
        await host.StartAsync();
        Task hostDone = host.WaitForShutdownAsync();
        (TimeSpan makespan, RunEnd end) = await WaitAsync(bus, TimeProvider.System, start, Deadline(options, mode), () => hostDone.IsCompleted);
        BusCounts atEnd = await bus.GetCountsAsync();
        TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime - cpuBefore;
        await host.StopAsync();
        await hostDone;
        var group = (WorkerGroup)host.Services.GetService(typeof(WorkerGroup))!;
        return new RunResult(mode, options.Workers, "memory", makespan, end, atEnd, await bus.GetCountsAsync(),
            ProcessStats.From(group.Stats, 0, cpu), Bound(options, mode), (options.CreateMode(mode) as ThreadPoolMode)?.MinThreads);
    }

    /// <summary>
    /// One mode on virtual time: one worker on the mode's loop, on a thread of its own, with the broker and the verdict on the
    /// run's clock. The coordinator's side (filling the queue, the watch for the verdict) runs on the loop at its top level, as on
    /// a thread of its own: it never waits behind a CPU part for long, and it takes no virtual time.
    /// </summary>
    private Task<RunResult> RunVirtualAsync(string modeName) =>
        Task.Factory.StartNew(() => RunVirtual(modeName), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    private RunResult RunVirtual(string modeName)
    {
        var clock = new VirtualTimeProvider();
        var bus = new InMemoryMessageBus(options.Scaled(options.MemoryLatency), clock);
        Mode mode = options.CreateMode(modeName);
        mode.Clock = clock;
        var stats = new WorkerStats();
        var worker = new MessageWorker(bus, mode, options, stats, heartbeat: null);
        (TimeSpan Makespan, RunEnd End) verdict = default;
        BusCounts? atEnd = null;
        BusCounts? final = null;
        TimeSpan cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
        mode.Run(async () =>
        {
            using var stopping = new CancellationTokenSource();
            await mode.MoveTo(LeaseWorker.Core.Activity.Lease);
            Fill(bus);
            long start = clock.GetTimestamp();
            Task running = worker.RunAsync(stopping.Token);
            verdict = await WaitAsync(bus, clock, start, Deadline(options, modeName), () => running.IsCompleted);
            atEnd = await bus.GetCountsAsync();

            // Stopped as the host stops its workers: what they hold is abandoned. Cancel, not CancelAsync: the callbacks run here, on
            // the loop, so the loop cannot jump the clock while a pool thread is still running them.
            stopping.Cancel();
            await running;
            final = await bus.GetCountsAsync();
        });
        TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime - cpuBefore;
        return new RunResult(modeName, 1, "memory", verdict.Makespan, verdict.End, atEnd!, final!,
            ProcessStats.From([stats], 0, cpu), Bound(options, modeName), null);
    }

    /// <summary>The run's messages, <c>message 1</c> to <c>message N</c> (<c>--hang-message K</c> names the K-th).</summary>
    private string[] Payloads() => [.. Enumerable.Range(1, options.Messages).Select(i => $"message {i}")];

    private void Fill(InMemoryMessageBus bus)
    {
        foreach (string payload in Payloads())
        {
            bus.Enqueue(payload);
        }
    }

    /// <summary>
    /// A worker process's settings: the coordinator's own, with one mode. The queue's prefix comes along, so the worker derives the
    /// mode's queue as the coordinator does; the connection string travels apart (<see cref="WorkerChild.Start"/>).
    /// </summary>
    public static Options WorkerOptions(Options o, string mode) => o with { Modes = [mode], Connection = null };

    /// <summary>The least time any scheduler could take: all CPU back to back on the cores the mode can use, or one message's chain.</summary>
    public static TimeSpan Bound(Options o, string mode)
    {
        int perProcess = o.CreateMode(mode).CpuThreads(CpuKind.Spin) ?? Environment.ProcessorCount;
        int threads = Math.Min(o.Workers * perProcess, Environment.ProcessorCount);
        TimeSpan cpu = o.ScaledCpu;
        TimeSpan work = TimeSpan.FromTicks(cpu.Ticks * o.Messages * o.Steps / threads) + o.Scaled(o.Io);
        TimeSpan chain = o.Steps * (cpu + o.Scaled(o.Io));
        return work > chain ? work : chain;
    }

    /// <summary>The deadline of a mode's run: --deadline, or 3 times its CPU bound plus the stall time.</summary>
    public static TimeSpan Deadline(Options o, string mode) => o.Deadline ?? (Bound(o, mode) * 3) + o.ScaledStallAfter;

    /// <summary>Watches the broker's counts on <paramref name="time"/> (timestamps of it) until the run's verdict.</summary>
    private async Task<(TimeSpan Makespan, RunEnd End)> WaitAsync(IMessageBus bus, TimeProvider time, long start, TimeSpan deadline, Func<bool> allExited)
    {
        long lastProgress = -1;
        long lastChange = time.GetTimestamp();
        while (true)
        {
            BusCounts counts = await bus.GetCountsAsync();
            if (counts.Completed >= options.Messages)
            {
                return (time.GetElapsedTime(start), RunEnd.Completed);
            }

            // Progress is a completion or a delivery: a mode that loses every lease still redelivers; a zombie lease stops both.
            if (counts.Completed + counts.Delivered != lastProgress)
            {
                lastProgress = counts.Completed + counts.Delivered;
                lastChange = time.GetTimestamp();
            }
            else if (time.GetElapsedTime(lastChange) > options.ScaledStallAfter)
            {
                return (time.GetElapsedTime(start), RunEnd.NoProgress);
            }
            else if (allExited())
            {
                return (time.GetElapsedTime(start), RunEnd.WorkersExited);
            }

            // A mode that loses every lease never stalls (the broker redelivers forever): give up at the deadline.
            if (time.GetElapsedTime(start) > deadline)
            {
                return (time.GetElapsedTime(start), RunEnd.Deadline);
            }

            await Task.Delay(Poll, time);
        }
    }
}
