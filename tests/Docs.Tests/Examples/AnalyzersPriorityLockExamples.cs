using PriorityAsync;
using PriorityAsync.Hosting;

namespace Docs.Tests.Examples;

/// <summary>The code block of docs/analyzers.md that answers PA0006 (tools/Snippets copies the region there): the same client
/// behind <see cref="PriorityLock"/>, which raises the holder to its most urgent waiter's level.</summary>
public sealed class AnalyzersPriorityLockExamples : PriorityBackgroundService
{
    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        Priority.Start(KeepLeaseAsync, level: 2);
        await ProcessAsync(stoppingToken);
    }

    // begin-snippet: analyzers-pa0006-fix
    // Needs: a PriorityBackgroundService whose processing (level 0) and lease keeper (level 2) share a client (CallAsync).
    private readonly PriorityLock _client = new();          // the client takes one call at a time

    private async Task KeepLeaseAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)               // level 2
        {
            await Priority.Delay(TimeSpan.FromSeconds(1), stop);
            using (await _client.LockAsync(stop))           // a holder at level 0 runs at level 2 until it releases
            {
                await CallAsync("renew", stop);
            }
        }
    }

    private async Task ProcessAsync(CancellationToken stop)
    {
        using (await _client.LockAsync(stop))
        {
            await CallAsync("fetch", stop);
        }
    }
    // end-snippet

    private static Task CallAsync(string what, CancellationToken stop) => Task.Delay(TimeSpan.FromMilliseconds(what.Length), TimeProvider.System, stop);
}
