using Microsoft.Extensions.Logging;
using PriorityAsync;

namespace Docs.Tests.Examples;

/// <summary>The code blocks of docs/reliability.md (tools/Snippets copies each region there).</summary>
public static class ReliabilityExamples
{
    /// <summary>
    /// The hazard, compiled but never run here: on the loop thread it blocks that thread for good.
    /// tests/PriorityAsync.Tests/Reliability/Watchdog/StallDetectionTests runs the same <c>Wait()</c> on a loop and checks the report.
    /// </summary>
    public static void SyncOverAsyncOnTheLoop()
    {
        // begin-snippet: reliability-hazard
        // Needs: the loop thread (inside PriorityContext.Run): the hazard itself, never to be written.
        LoadAsync().Wait();        // or .Result, .GetAwaiter().GetResult()
        async Task LoadAsync() { await Priority.Delay(TimeSpan.FromMilliseconds(10)); }   // resumes on this loop, which is blocked above
        // end-snippet
    }

    /// <summary>The watchdog wired to a logger on a loop thread; <paramref name="use"/> runs while the loop lives (ReliabilityTests stalls it).</summary>
    public static async Task RunWatchedAsync(ILogger log, Func<PriorityContext, Task> use)
    {
        // begin-snippet: reliability-stall
        // Needs: an async method; using PriorityAsync; using Microsoft.Extensions.Logging; and an ILogger named log.
        var options = new PriorityContextOptions { Levels = 3, StallTimeout = TimeSpan.FromSeconds(2) };
        await using var loop = new PriorityContextThread(options);
        loop.Context.StallDetected += (_, e) =>
            log.LogError("Loop stalled: level {Level} work has waited at least {Waiting} ({Pending} items)", e.Level, e.WaitingFor, e.PendingCount);
        // end-snippet
        await use(loop.Context);
    }
}
