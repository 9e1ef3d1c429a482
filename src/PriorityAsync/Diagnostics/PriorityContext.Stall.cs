using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The stall watchdog's side of the context: the event, and what the watchdog reads. Nothing here runs on the post or dispatch path.
public sealed partial class PriorityContext
{
    // Null: no watchdog (the default). Copied from the options when the context is created.
    private readonly TimeSpan? _stallTimeout;

    /// <summary>
    /// Raised when the loop has started no item for at least <see cref="PriorityContextOptions.StallTimeout"/> while work was waiting,
    /// typically because the running item blocks (a sync-over-async <c>task.Wait()</c> or <c>.Result</c> on the loop thread, for work
    /// queued to this same loop, never completes). Raised once per stall, on a thread-pool thread, while the stall lasts.
    /// </summary>
    /// <remarks>
    /// <para>Only raised when <see cref="PriorityContextOptions.StallTimeout"/> is set. Each stall is also recorded on the
    /// <c>System.Diagnostics.Metrics</c> meter named <c>PriorityAsync</c>: the counter <c>priorityasync.stalls</c> and the histogram
    /// <c>priorityasync.stall.waiting_time</c> (seconds), tagged with <c>priorityasync.context</c> (the <see cref="Name"/>) and
    /// <c>priorityasync.level</c>.</para>
    /// <para>The loop is not interrupted: a watchdog reports, it cannot unblock. As for any thread-pool callback, an exception thrown by a
    /// handler is unhandled and ends the process.</para>
    /// </remarks>
    public event EventHandler<StallDetectedEventArgs>? StallDetected;

    /// <summary>The number of items the loop has started, over all levels. Any thread; see <see cref="Watchdog"/>.</summary>
    internal long DispatchCount
    {
        get
        {
            long total = 0;
            for (int level = 0; level < _runPerLevel.Length; level++)
            {
                total += Volatile.Read(ref _runPerLevel[level]);
            }

            return total;
        }
    }

    /// <summary>Called by the loop as it starts: a watchdog when <see cref="PriorityContextOptions.StallTimeout"/> is set, else null.</summary>
    private Watchdog? StartWatchdog() => _stallTimeout is { } timeout ? Watchdog.Start(this, timeout) : null;

    internal void OnStallDetected(StallDetectedEventArgs report)
    {
        PriorityMetrics.RecordStall(Name, report.Level, report.WaitingFor);
        StallDetected?.Invoke(this, report);
    }
}
