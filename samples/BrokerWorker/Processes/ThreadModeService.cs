using System.Threading;
using System.Threading.Tasks;
using BrokerWorker.Processing;
using LeaseWorker.Core;
using Microsoft.Extensions.Hosting;

namespace BrokerWorker.Processes;

/// <summary>
/// The single, threadpool and heartbeat-thread modes as a hosted worker: the mode runs <see cref="MessageWorker"/> on a thread of
/// its own (an <c>AsyncContext</c> thread, or the pool), and the service completes when it returns.
/// </summary>
public sealed class ThreadModeService(WorkerGroup group, Mode mode) : BackgroundService
{
    // LongRunning: a thread of its own, not a pool thread; the mode's loop holds it until the worker returns.
    protected override Task ExecuteAsync(CancellationToken stoppingToken) => Task.Factory.StartNew(
        () =>
        {
            (MessageWorker worker, Heartbeat? heartbeat) = group.CreateWorker(mode);
            try
            {
                mode.Run(() => worker.RunAsync(stoppingToken));
            }
            finally
            {
                heartbeat?.Dispose();
                group.WorkerDone();
            }
        },
        CancellationToken.None,
        TaskCreationOptions.LongRunning,
        TaskScheduler.Default);
}
