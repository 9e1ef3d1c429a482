using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using BrokerWorker.Processing;
using LeaseWorker.Core;
using MessageBus;
using Microsoft.Extensions.Hosting;

namespace BrokerWorker.Processes;

/// <summary>
/// The workers of one host (one worker process on PostgreSQL; all N workers of the in-memory run): their shared settings and
/// statistics, and the host's stop once every worker is done.
/// </summary>
public sealed class WorkerGroup(IMessageBus bus, Options options, int workers, IHostApplicationLifetime lifetime)
{
    private readonly List<WorkerStats> _stats = [];
    private int _running = workers;

    public Options Options => options;

    public IReadOnlyList<WorkerStats> Stats => _stats;

    /// <summary>Runs one worker of <paramref name="mode"/> where the caller is (a hosted worker's own scheduler) until it returns,
    /// then counts it done. For the modes without a renewer thread of their own.</summary>
    public async Task RunWorkerAsync(Mode mode, CancellationToken stoppingToken)
    {
        (MessageWorker worker, _) = CreateWorker(mode);
        try
        {
            await worker.RunAsync(stoppingToken);
        }
        finally
        {
            WorkerDone();
        }
    }

    /// <summary>Creates one worker's <see cref="MessageWorker"/> (and, in the heartbeat-thread mode, its renewer thread).</summary>
    public (MessageWorker Worker, Heartbeat? Heartbeat) CreateWorker(Mode mode)
    {
        var stats = new WorkerStats();
        lock (_stats)
        {
            _stats.Add(stats);
        }

        Heartbeat? heartbeat = mode.RenewsOnDedicatedThread
            ? new Heartbeat(bus, options.Scaled(options.RenewEvery), options.Scaled(options.Lease), stats)
            : null;
        return (new MessageWorker(bus, mode, options, stats, heartbeat), heartbeat);
    }

    /// <summary>A worker is done: the last one stops the host.</summary>
    public void WorkerDone()
    {
        if (Interlocked.Decrement(ref _running) == 0)
        {
            lifetime.StopApplication();
        }
    }
}
