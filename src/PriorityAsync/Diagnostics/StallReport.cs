using System;

namespace PriorityAsync.Internal;

/// <summary>
/// The report of one stall, the same for both schedulers: the watchdog (<see cref="Watchdog"/>) found a loop, or one pool thread, that
/// has started no item for the stall timeout while work waits.
/// </summary>
/// <remarks>Runs on the watchdog thread, once per stall; it touches no state of the scheduler, so it takes no part in its protocols.</remarks>
internal static class StallReport
{
    /// <summary>Records the stall (metrics, event source), then raises <paramref name="handlers"/>; with no handler, writes one line
    /// to the standard error instead: a hang must not be silent.</summary>
    /// <param name="sender">The scheduler, the handlers' sender.</param>
    /// <param name="name">The scheduler's name.</param>
    /// <param name="handlers">The scheduler's <c>StallDetected</c> handlers, or <see langword="null"/>.</param>
    /// <param name="report">The stall.</param>
    /// <param name="stalled">What stalled, for the line: "the loop" or "thread 3".</param>
    /// <param name="schedulerType">The scheduler's type name: "PriorityContext" or "PriorityThreadPool".</param>
    /// <param name="needs">What the blocking wait needs: "loop" or "pool".</param>
    /// <param name="thread">The stalled pool thread's index; 0 for a single loop.</param>
    public static void Raise(
        object sender,
        string name,
        EventHandler<StallDetectedEventArgs>? handlers,
        StallDetectedEventArgs report,
        string stalled,
        string schedulerType,
        string needs,
        int thread = 0)
    {
        PriorityMetrics.RecordStall(name, report.Level, report.WaitingFor);
        if (PriorityEventSource.IsOn)
        {
            // The blocking item is named when an inspector session saw it start (its state holds the thread's running item).
            string blocking = string.Empty;
            double blockingFor = -1;
            int id = 0;
            if (sender is IObservedScheduler scheduler)
            {
                id = scheduler.InspectorId;
                if (scheduler.Inspection is { } inspection && inspection.TryReadCurrent(thread, out string method, out _, out long start))
                {
                    blocking = method;
                    blockingFor = (scheduler.Timestamp() - start) * 1000.0 / scheduler.TimestampFrequency;
                }
            }

            PriorityEventSource.Log.StallDetected(name, report.Level, (long)report.WaitingFor.TotalMilliseconds, report.PendingCount, id, thread, blocking, blockingFor);
        }

        if (handlers is not null)
        {
            handlers(sender, report);
            return;
        }

        // Nobody listens: one line per stall (the watchdog reports once per episode).
        Console.Error.WriteLine(
            $"PriorityAsync: {stalled} of {schedulerType} '{name}' has started no item for {report.WaitingFor.TotalSeconds:F1} s while " +
            $"{report.PendingCount} item(s) wait (highest level {report.Level}). The running item is blocked: typically a .Wait(), .Result " +
            $"or GetAwaiter().GetResult() on work that needs this {needs}. Await it instead. (Handle {schedulerType}.StallDetected to report " +
            $"stalls yourself, or set {schedulerType}Options.StallTimeout = null to turn the watchdog off.)");
    }
}
