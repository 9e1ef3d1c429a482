using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>Raises a stall report ([O-STALL]): the meter and the event source always; the handlers, or, when nobody listens, one line on
/// standard error (so that a hang is never silent).</summary>
internal static class StallReport
{
    /// <param name="scheduler">The stalled scheduler.</param>
    /// <param name="handlers">Its <c>StallDetected</c> handlers.</param>
    /// <param name="report">The report.</param>
    /// <param name="stalled">What stalled, for the line: "the loop" or "thread 3".</param>
    /// <param name="thread">The stalled thread's index (0 for a loop): the report names the item it runs.</param>
    public static void Raise(
        PriorityScheduler scheduler, EventHandler<StallDetectedEventArgs>? handlers, StallDetectedEventArgs report, string stalled, int thread)
    {
        PriorityMetrics.RecordStall(scheduler.Name, report.Level, report.WaitingFor);

        // The blocking item: from an inspector session that saw it start (with its run time), else from the thread's own record
        // ([O-RUNNING]), whenever it started.
        string blocking = string.Empty;
        int blockingLevel = -1;
        double blockingFor = -1;
        if (scheduler.Inspection is { } inspection && inspection.TryReadCurrent(thread, out string method, out int level, out long start))
        {
            (blocking, blockingLevel) = (method, level);
            blockingFor = (scheduler.Timestamp() - start) * 1000.0 / scheduler.TimestampFrequency;
        }
        else if (scheduler.TryReadRunning(thread, out SendOrPostCallback callback, out object? state, out int recordedLevel, out _))
        {
            (blocking, blockingLevel) = (CallbackNames.Describe(callback, state), recordedLevel);
        }

        if (PriorityEventSource.IsOn)
        {
            PriorityEventSource.Log.StallDetected(
                scheduler.Name, report.Level, (long)report.WaitingFor.TotalMilliseconds, report.PendingCount, scheduler.InspectorId, thread, blocking, blockingFor);
        }

        if (handlers is not null)
        {
            handlers(scheduler, report);
            return;
        }

        // Nobody listens: one line per stall (the watchdog reports once per episode).
        Console.Error.WriteLine(
            $"PriorityAsync: {stalled} of {scheduler.Subject} has started no item for {report.WaitingFor.TotalSeconds:F1} s while " +
            $"{report.PendingCount} item(s) wait (highest level {report.Level}). The running item{(blocking.Length > 0 ? $", {blocking} at level {blockingLevel}," : string.Empty)} is blocked: typically a .Wait(), .Result " +
            $"or GetAwaiter().GetResult() on work that needs this {(scheduler is PriorityContext ? "loop" : "pool")}. Await it instead. " +
            $"(Handle StallDetected to report stalls yourself, or set {scheduler.Kind}Options.StallTimeout = null to turn the watchdog off.)");
    }
}
