using System;
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
    protected override Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            (MessageWorker worker, Heartbeat? heartbeat) = group.CreateWorker(mode);
            try
            {
                mode.Run(() => worker.RunAsync(stoppingToken));
                done.SetResult();
            }
            catch (Exception e)
            {
                done.SetException(e);
            }
            finally
            {
                heartbeat?.Dispose();
                group.WorkerDone();
            }
        })
        {
            IsBackground = true,
            Name = $"{mode.Name}-worker",
        };
        thread.Start();
        return done.Task;
    }
}
