using System.Threading;
using System.Threading.Tasks;

namespace SyncOverAsync;

/// <summary>The request handler of every experiment: one backend call per request.</summary>
internal static class RequestHandler
{
    /// <summary>Serves one request.</summary>
    /// <param name="backend">The service to call.</param>
    /// <param name="style">Await the call (the fix) or block on it (the mistake).</param>
    /// <param name="release">Only the loop experiment passes a token: a blocked wait that its watchdog reported is released with it,
    /// so that the sample can end. A real <c>.Wait()</c> on the loop thread would hang forever.</param>
    public static async Task HandleAsync(Backend backend, Style style, CancellationToken release = default)
    {
        if (style == Style.Await)
        {
            await backend.CallAsync();
        }
        else
        {
            backend.CallAsync().Wait(release); // sync over async: this thread blocks until the call is back
        }
    }
}
