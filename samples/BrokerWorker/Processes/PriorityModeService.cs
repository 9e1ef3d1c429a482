using System.Threading;
using System.Threading.Tasks;
using BrokerWorker.Processing;
using LeaseWorker.Core;
using PriorityAsync.Hosting;

namespace BrokerWorker.Processes;

/// <summary>The priority mode as a hosted worker: <see cref="MessageWorker"/> on the service's own priority loop (3 levels).</summary>
public sealed class PriorityModeService(WorkerGroup group) : PriorityBackgroundService
{
    protected override Task ExecuteAsync(CancellationToken stoppingToken) => group.RunWorkerAsync(new PriorityMode(), stoppingToken);
}
