using PriorityAsync;
using PriorityAsync.Hosting;

namespace Docs.Tests.Examples;

/// <summary>
/// The code block of docs/analyzers.md that PA0006 reports (tools/Snippets copies the region there): a lease keeper at level 2 and
/// the processing at level 0 share a client behind a lock that knows nothing of levels.
/// </summary>
public sealed class AnalyzersLockExamples : PriorityBackgroundService
{
    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        Priority.Start(KeepLeaseAsync, level: 2);
        await ProcessAsync(stoppingToken);
    }

#pragma warning disable PA0006 // the mistake the page shows
    // begin-snippet: analyzers-pa0006-bad
    // Needs: a PriorityBackgroundService whose processing (level 0) and lease keeper (level 2) share a client (CallAsync).
    private readonly SemaphoreSlim _client = new(1, 1);    // the client takes one call at a time

    private async Task KeepLeaseAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)               // level 2
        {
            await Priority.Delay(TimeSpan.FromSeconds(1), stop);
            await _client.WaitAsync(stop);                  // PA0006: the holder may be level 0, behind all of level 1
            try
            {
                await CallAsync("renew", stop);
            }
            finally
            {
                _client.Release();
            }
        }
    }

    private async Task ProcessAsync(CancellationToken stop)
    {
        await _client.WaitAsync(stop);                      // PA0006 (level 0)
        try
        {
            await CallAsync("fetch", stop);
        }
        finally
        {
            _client.Release();
        }
    }
    // end-snippet
#pragma warning restore PA0006

    private static Task CallAsync(string what, CancellationToken stop) => Task.Delay(TimeSpan.FromMilliseconds(what.Length), TimeProvider.System, stop);
}
