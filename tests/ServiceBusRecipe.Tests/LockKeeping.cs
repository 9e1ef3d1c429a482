using Azure.Messaging.ServiceBus;
using PriorityAsync;

namespace ServiceBusRecipe;

/// <summary>The handler of docs/azure-service-bus.md: the message's lock keeper at the top level, the work below it.</summary>
public static class LockKeeping
{
    // begin-snippet: servicebus-handler
    // Needs: the Azure.Messaging.ServiceBus and PriorityAsync packages (using Azure.Messaging.ServiceBus; using PriorityAsync;).
    /// <summary>How often a message's lock is renewed: well within the queue's lock duration (1 minute by default).</summary>
    public static readonly TimeSpan RenewEvery = TimeSpan.FromSeconds(20);

    /// <summary>
    /// Queued at level 2 as the message arrives, so that its lock keeper starts at once, even while other messages' work keeps the
    /// loop busy; then moves to level 1 for the work, and completes the message before its keeper stops. Renewal never waits
    /// behind the processing of this or any other message: at each checkpoint of the work, a due renewal runs first.
    /// </summary>
    public static async Task HandleAsync(ProcessMessageEventArgs args, TimeSpan renewEvery,
        Func<ServiceBusReceivedMessage, CancellationToken, Task> process)
    {
        await TaskScope.RunAsync(async scope =>
        {
            scope.Start(async stop =>                       // the lock keeper: a child of this message, at level 2
            {
                while (true)                                // until the scope cancels it
                {
                    await Priority.Delay(renewEvery, stop); // a loop timer: resumes at level 2, ahead of queued work
                    await args.RenewMessageLockAsync(args.Message, stop);
                }
            }, level: 2);

            await Priority.Prioritize(1);                       // the work, below every keeper
            await process(args.Message, args.CancellationToken); // with checkpoints between slices of CPU work
            await args.CompleteMessageAsync(args.Message);      // while the keeper still holds the lock
            scope.Cancel();                                     // done: stop keeping it
        });
    }
    // end-snippet
}
