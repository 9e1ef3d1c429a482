using System.Threading;
using System.Threading.Tasks;
using PriorityAsync;

namespace SyncOverAsync;

/// <summary>The request handler of every experiment: one backend call per request.</summary>
internal static class RequestHandler
{
    /// <summary>Serves one request.</summary>
    /// <param name="backend">The service to call.</param>
    /// <param name="style">Await the call (the fix) or block on it (the mistake).</param>
    /// <param name="release">Only the loop experiment passes a token: a blocked wait that its watchdog reported is released with it,
    /// so that the sample can end. A real <c>.Wait()</c> on the loop thread would hang forever.</param>
    [RunsOnPriorityLoop] // in the loop experiment; the pool experiment calls it on pool threads
    public static async Task HandleAsync(Backend backend, Style style, CancellationToken release = default)
    {
        // begin-snippet: sync-over-async-handler
        // Needs: a request handler on a loop; style, backend and request (samples/SyncOverAsync, RequestHandler).
        if (style == Style.Await)
        {
            await backend.CallAsync();
        }
        else
        {
#pragma warning disable PA0002 // the mistake this sample measures: on the loop it blocks every level until the watchdog's report releases it
            backend.CallAsync().Wait(release); // sync over async: this thread blocks until the call is back
#pragma warning restore PA0002
        }
        // end-snippet
    }
}
