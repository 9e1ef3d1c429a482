using System;
using System.Threading;
using System.Threading.Tasks;
using MessageBus;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.Hosting;

namespace HostedWorker;

/// <summary>
/// Takes messages from the bus and processes several at once on one thread: the worker's priority loop. Keeping the leases alive
/// runs at the top level, so a renewal never waits behind CPU-bound processing; processing runs at the bottom level and yields at
/// checkpoints.
/// </summary>
public sealed partial class PriorityLeaseWorker(IMessageBus bus, WorkerSettings settings, IHostApplicationLifetime lifetime, ILogger<PriorityLeaseWorker> logger)
    : PriorityBackgroundService
{
    private const int ProcessLevel = 0;  // CPU-bound work
    private const int ReceiveLevel = 1;  // taking new messages
    private const int LeaseLevel = 2;    // renew, complete, abandon: never behind processing

    private int _completed;  // only touched on the loop thread: no lock needed

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var slots = new Task[settings.Concurrency];
        for (int i = 0; i < slots.Length; i++)
        {
            slots[i] = RunSlotAsync(stoppingToken);
        }

        await Task.WhenAll(slots);
        if (!stoppingToken.IsCancellationRequested)
        {
            LogQueueEmpty(_completed);
            lifetime.StopApplication();
        }
    }

    private async Task RunSlotAsync(CancellationToken stoppingToken)
    {
        while (!stoppingToken.IsCancellationRequested)
        {
            await Context.Prioritize(ReceiveLevel);

            // Not cancelled by the stopping token: a receive abandoned in flight could lease a message nobody handles (it would
            // come back only after its lease expired). A message received while stopping is abandoned below, at once.
            Lease? lease = await bus.ReceiveAsync(settings.LeaseDuration, CancellationToken.None);
            if (lease is null)
            {
                return;
            }

            await HandleAsync(lease, stoppingToken);
        }
    }

    private async Task HandleAsync(Lease lease, CancellationToken stoppingToken)
    {
        LogReceived(lease.MessageId, lease.DeliveryCount);

        // Cancelled when the host stops or when the lease is lost: either way, stop working on this message.
        using var work = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
        using var stopRenewing = new CancellationTokenSource();
        Task<bool> leaseKept = KeepLeaseAsync(lease, work, stopRenewing.Token);

        bool processed = await ProcessAsync(lease, work.Token);
        await stopRenewing.CancelAsync();
        bool kept = await leaseKept;

        await Context.Prioritize(LeaseLevel);
        if (!kept)
        {
            LogLeaseLost(lease.MessageId);
        }
        else if (processed)
        {
            if (await bus.CompleteAsync(lease, CancellationToken.None) && ++_completed % settings.ProgressEvery == 0)
            {
                LogProgress(_completed);
            }
        }
        else
        {
            await bus.AbandonAsync(lease, CancellationToken.None);  // stopping: hand the message back now, not when its lease expires
        }
    }

    private async Task<bool> KeepLeaseAsync(Lease lease, CancellationTokenSource work, CancellationToken stop)
    {
        await Context.Prioritize(LeaseLevel);  // every await below resumes at this level, ahead of any queued processing
        while (true)
        {
            try
            {
                await PriorityAsync.Priority.Delay(settings.RenewInterval, stop); // the loop's timer: a starved pool does not make the renewal late
            }
            catch (OperationCanceledException)
            {
                return true;
            }

            if (!await bus.RenewAsync(lease, settings.LeaseDuration, CancellationToken.None))
            {
                await work.CancelAsync();
                return false;
            }
        }
    }

    private async Task<bool> ProcessAsync(Lease lease, CancellationToken token)
    {
        await Context.Prioritize(ProcessLevel);
        for (TimeSpan done = TimeSpan.Zero; done < settings.Work; done += settings.Checkpoint)
        {
            if (token.IsCancellationRequested)
            {
                return false;
            }

            CpuWork.Run(settings.Checkpoint);   // stands in for parsing, rendering, hashing: nothing else runs meanwhile
            await Context.Yield(ProcessLevel);  // a checkpoint: renewals and completes run first
        }

        return true;
    }

    [LoggerMessage(Level = LogLevel.Debug, Message = "Received message {Id} (delivery {DeliveryCount}).")]
    private partial void LogReceived(long id, int deliveryCount);

    [LoggerMessage(Level = LogLevel.Information, Message = "{Completed} messages completed.")]
    private partial void LogProgress(int completed);

    [LoggerMessage(Level = LogLevel.Information, Message = "The queue is empty: {Completed} messages completed. Stopping.")]
    private partial void LogQueueEmpty(int completed);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Lost the lease on message {Id}; the bus gives it to another worker.")]
    private partial void LogLeaseLost(long id);
}
