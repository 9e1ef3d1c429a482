using System;

namespace PriorityAsync.Internal;

/// <summary>Raises a stall report: the meter and the event source always; the handlers, or, when nobody listens, one line on standard
/// error (so that a hang is never silent).</summary>
internal static class StallReport
{
    public static void Raise(
        PriorityScheduler scheduler, EventHandler<StallDetectedEventArgs>? handlers, StallDetectedEventArgs report, string stalled)
    {
        PriorityMetrics.RecordStall(scheduler.Name, report.Level, report.WaitingFor);
        if (PriorityEventSource.IsOn)
        {
            PriorityEventSource.Log.StallDetected(scheduler.Name, report.Level, (long)report.WaitingFor.TotalMilliseconds, report.PendingCount);
        }

        if (handlers is not null)
        {
            handlers(scheduler, report);
            return;
        }

        // Nobody listens: one line per stall (the watchdog reports once per episode).
        Console.Error.WriteLine(
            $"PriorityAsync: {stalled} of {scheduler.Subject} has started no item for {report.WaitingFor.TotalSeconds:F1} s while " +
            $"{report.PendingCount} item(s) wait (highest level {report.Level}). The running item is blocked: typically a .Wait(), .Result " +
            $"or GetAwaiter().GetResult() on work that needs this {(scheduler is PriorityContext ? "loop" : "pool")}. Await it instead. " +
            $"(Handle StallDetected to report stalls yourself, or set {scheduler.Kind}Options.StallTimeout = null to turn the watchdog off.)");
    }
}
