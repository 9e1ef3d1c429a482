using System;
using System.Diagnostics;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The stall watchdog's side of the context: the event, and what the watchdog reads. Nothing here runs on the post or dispatch path.
public sealed partial class PriorityContext : IWatchdogTarget
{
    // Null: no watchdog. Copied from the options when the context is created (on by default: PriorityContextOptions.DefaultStallTimeout).
    private readonly TimeSpan? _stallTimeout;

    /// <summary>
    /// Raised when the loop has started no item for at least <see cref="PriorityContextOptions.StallTimeout"/> while work was waiting,
    /// typically because the running item blocks (a sync-over-async <c>task.Wait()</c> or <c>.Result</c> on the loop thread, for work
    /// queued to this same loop or for a loop timer or <see cref="Priority.Delay"/> that only this loop can fire, never completes).
    /// Raised once per stall, on the process-wide watchdog thread (never the thread pool), while the stall lasts.
    /// </summary>
    /// <remarks>
    /// <para>On by default (<see cref="PriorityContextOptions.DefaultStallTimeout"/>, 10 seconds); <see cref="PriorityContextOptions.StallTimeout"/>
    /// = <see langword="null"/> turns it off. Each stall is also recorded on the <c>System.Diagnostics.Metrics</c> meter named
    /// <c>PriorityAsync</c> (the counter <c>priorityasync.stalls</c> and the histogram <c>priorityasync.stall.waiting_time</c>, in seconds,
    /// tagged with <c>priorityasync.context</c> and <c>priorityasync.level</c>) and written to the <c>PriorityAsync</c> event source
    /// (event <c>StallDetected</c>). So that a hang is never silent, a stall that no handler observes is also written to standard error,
    /// one line per stall; attach a handler (the hosting package logs it as a warning) to take that over.</para>
    /// <para>The loop is not interrupted: a watchdog reports, it cannot unblock. Handlers run one at a time on the watchdog thread: a slow
    /// one delays other contexts' reports. An exception thrown by a handler is unhandled and ends the process.</para>
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

    internal void OnStallDetected(StallDetectedEventArgs report) =>
        StallReport.Raise(this, Name, StallDetected, report, "the loop", nameof(PriorityContext), "loop");

    bool IWatchdogTarget.IsFinished => IsFinished;

    long IWatchdogTarget.DispatchCount => DispatchCount;

    int IWatchdogTarget.PendingCount(int level) => _queues.Count(level);

    int IWatchdogTarget.OverdueTimerLevel() => OverdueTimerLevel();

    void IWatchdogTarget.OnStallDetected(StallDetectedEventArgs report) => OnStallDetected(report);
}
