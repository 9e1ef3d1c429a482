using System.Threading;
using System.Threading.Tasks;
using BrokerWorker.Processing;
using LeaseWorker.Core;
using PriorityAsync.Hosting;

namespace BrokerWorker.Processes;

/// <summary>The priority-threads mode as a hosted worker: <see cref="MessageWorker"/> on the service's own <see cref="PriorityAsync.PriorityThreadPool"/>.</summary>
public sealed class PriorityThreadsModeService(WorkerGroup group) : PriorityThreadPoolBackgroundService
{
    protected override Task ExecuteAsync(CancellationToken stoppingToken) => group.RunWorkerAsync(new PriorityThreadsMode(group.Options.CoreShare), stoppingToken);
}
