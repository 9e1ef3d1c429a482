using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync;

namespace SyncOverAsync;

/// <summary>
/// The same handler on a <see cref="PriorityContextThread"/>, at the requests' level, with <see cref="PriorityContextOptions.StallTimeout"/>
/// set. With <see cref="Style.Wait"/> the loop blocks on a call whose continuation is queued to that same loop: a deadlock, which the
/// watchdog reports (the level, how long the work has waited) within its timeout. Here the report also releases the blocked wait, so
/// that the sample ends; in an application the report is the log line that says why the loop hangs.
/// </summary>
internal static class LoopExperiment
{
    /// <summary>The requests' level; level 2 would be health checks, level 0 background work.</summary>
    public const int RequestLevel = 1;

    /// <summary>How long a blocked wait may last without a report before the experiment calls the watchdog broken.</summary>
    public static TimeSpan GiveUpAfter(TimeSpan stallTimeout) => stallTimeout * 20 + TimeSpan.FromSeconds(10);

    public static StallResult Run(Style style, TimeSpan stallTimeout, TimeSpan latency, Action<StallDetectedEventArgs>? onReport = null)
    {
        var backend = new Backend(latency);
        var reports = new ConcurrentQueue<StallDetectedEventArgs>();
        using var release = new CancellationTokenSource();
        long reportedAt = 0;

        var options = new PriorityContextOptions { Levels = 3, StallTimeout = stallTimeout, Name = "requests" };
        var loop = new PriorityContextThread(options);
        loop.Context.StallDetected += (_, report) =>
        {
            // Raised on a thread-pool thread while the loop is stuck. Record it, show it, then release the blocked wait.
            Interlocked.CompareExchange(ref reportedAt, Stopwatch.GetTimestamp(), 0);
            reports.Enqueue(report);
            onReport?.Invoke(report);
            release.Cancel();
        };

        long start = Stopwatch.GetTimestamp();
        Task request = loop.Context.GetTaskFactory(RequestLevel)
            .StartNew(() => RequestHandler.HandleAsync(backend, style, release.Token))
            .Unwrap();

        string outcome;
        try
        {
            outcome = request.Wait(GiveUpAfter(stallTimeout)) ? "served" : "still blocked: no stall report";
        }
        catch (AggregateException ex) when (ex.InnerException is OperationCanceledException)
        {
            outcome = "released by the report";
        }

        if (style == Style.Await)
        {
            // A loop that awaits is idle while the call is out: give the watchdog two timeouts to prove it stays quiet.
            Thread.Sleep(stallTimeout * 2);
        }

        loop.Complete();
        bool ended = loop.Completion.Wait(GiveUpAfter(stallTimeout));
        long firstReport = Interlocked.Read(ref reportedAt);
        return new StallResult(
            style,
            [.. reports],
            firstReport == 0 ? null : Stopwatch.GetElapsedTime(start, firstReport),
            outcome,
            backend.Completed,
            ended);
    }
}
