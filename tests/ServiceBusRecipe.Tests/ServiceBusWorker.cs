using Azure.Messaging.ServiceBus;
using PriorityAsync;

namespace ServiceBusRecipe;

/// <summary>The recipe of docs/azure-service-bus.md: compiled against the SDK, never run against a namespace (none is reachable here).</summary>
public static class ServiceBusWorker
{
    // begin-snippet: servicebus-processor
    // Needs: the Azure.Messaging.ServiceBus and PriorityAsync packages (using Azure.Messaging.ServiceBus; using PriorityAsync;), and LockKeeping below.
    /// <summary>Processes a queue on one priority loop: every message's lock keeper at level 2, the work at level 1.</summary>
    public static async Task RunAsync(string connectionString, string queueName, CancellationToken stoppingToken)
    {
        await using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var client = new ServiceBusClient(connectionString);
        await using ServiceBusProcessor processor = client.CreateProcessor(queueName, new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 8,                     // messages in flight, all on the one loop
            AutoCompleteMessages = false,               // completed on the loop, once the work is done
            MaxAutoLockRenewalDuration = TimeSpan.Zero, // the SDK's renewal waits for the thread pool: off; the loop's keeper renews
        });

        // The processor calls this on the thread pool; the handler runs on the loop, and the processor waits for it. Level 2: the
        // message's lock keeper starts as soon as the message arrives, ahead of the work already queued.
        processor.ProcessMessageAsync += args => loop.Context.InvokeAsync(
            () => LockKeeping.HandleAsync(args, LockKeeping.RenewEvery, ProcessAsync), level: 2);
        processor.ProcessErrorAsync += args =>
        {
            Console.Error.WriteLine($"Service Bus ({args.ErrorSource}): {args.Exception.Message}");
            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync(stoppingToken);
        var stopped = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using (stoppingToken.Register(() => stopped.TrySetResult()))
        {
            await stopped.Task;                     // until the app stops
        }

        await processor.StopProcessingAsync(CancellationToken.None);
    }

    private static async Task ProcessAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken)
    {
        for (int slice = 0; slice < 100; slice++)
        {
            Thread.SpinWait(100_000);   // stands for a slice of CPU work on the loop thread
            await Priority.Checkpoint(); // the lock keepers, at level 2, run here when they are due
        }
    }
    // end-snippet
}
