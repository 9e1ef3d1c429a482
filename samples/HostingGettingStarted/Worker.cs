// begin-snippet: hosting-worker
// Needs: `dotnet new worker` with the PriorityAsync.Hosting package; samples/HostingGettingStarted/Program.cs beside it.
using PriorityAsync;
using PriorityAsync.Hosting;

namespace HostingGettingStarted;

// was: public class Worker(ILogger<Worker> logger) : BackgroundService
public sealed class Worker(ILogger<Worker> logger) : PriorityBackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        Task heartbeat = HeartbeatAsync(stoppingToken);         // level 2: never waits behind the work below
        while (!stoppingToken.IsCancellationRequested)
        {
#pragma warning disable PA0002 // stands for 200 ms of CPU-bound work, which blocks the loop just as much; the Yield below is the point
            Thread.Sleep(200);                                  // CPU-bound work at level 0, on the worker's own loop thread
#pragma warning restore PA0002
            await Context.Yield(0);                             // a checkpoint: anything more urgent runs now
        }

        await heartbeat;                                        // the loop ends when ExecuteAsync returns: await what you started
    }

    private async Task HeartbeatAsync(CancellationToken stoppingToken)
    {
        await Context.Prioritize(2);
        while (!stoppingToken.IsCancellationRequested)
        {
            int level = PriorityContext.CurrentLevel;
            logger.LogInformation("Heartbeat at level {Level}", level);
            try
            {
                await PriorityAsync.Priority.Delay(TimeSpan.FromSeconds(1), stoppingToken); // the loop's timer; resumes at level 2, ahead of queued level-0 work
            }
            catch (OperationCanceledException)
            {
            }
        }
    }
}
// end-snippet
