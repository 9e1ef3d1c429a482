using System;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// Reports escalations and long lock waits ([X-SEEN]): who raised whom, from which level to which and for how long, on the meter, the
/// event source and the trace recorder; a lock waiter that waited its stall timeout, there and, when nobody listens, on standard error.
/// Nothing is built while nobody listens but the scheduler's count of escalations.
/// </summary>
internal static class EscalationReport
{
    private static bool Listening =>
        PriorityEventSource.IsOn || PriorityMetrics.Escalations.Enabled || PriorityMetrics.EscalationDuration.Enabled || PriorityTraceRecorder.Active is not null;

    /// <summary>A node's floor changed (graph lock): an escalation begins when it rises above the node's own level, and ends when it drops
    /// back; the reports are made after the lock, through <paramref name="batch"/>.</summary>
    public static void FloorChanged(IEscalationNode node, int previous, int floor, object? cause, ref EscalationBatch batch)
    {
        int own = node.OwnLevel;
        if (floor > own && floor > previous)
        {
            NodeLinks links = node.Links;
            if (previous <= own)
            {
                links.RaisedAt = node.Scheduler.Timestamp();
                links.RaisedTo = floor;
                node.Scheduler.CountEscalation();
            }
            else
            {
                links.RaisedTo = Math.Max(links.RaisedTo, floor);
            }

            if (Listening)
            {
                // Named now: work that completes drops back, and a completed operation no longer names its delegate.
                string work = links.RaisedWork = node.Describe();
                (string kind, string by) = ReferenceEquals(cause, Joins.FixedLevel) ? ("join", $"code at level {floor}") : DescribeCause(cause);
                batch.After(StartedReport(node, work, own, floor, kind, by));
            }
        }
        else if (previous > own && floor <= own && node.LinksIfAny is { } links)
        {
            (long start, int to, long end) = (links.RaisedAt, links.RaisedTo, node.Scheduler.Timestamp());
            if (Listening)
            {
                string work = links.RaisedWork ?? node.Describe();
                batch.After(EndedReport(node, work, own, to, start, end));
            }

            links.RaisedWork = null;
        }
    }

    /// <summary>A waiter has waited its scheduler's stall timeout on a lock and still waits ([X-SEEN]).</summary>
    public static void LongLockWait(LockWaiter waiter, string lockName, string holders, bool raised)
    {
        PrioritySynchronizationContext context = waiter.Context!;
        PriorityScheduler scheduler = context.Scheduler;
        double waited = (System.Diagnostics.Stopwatch.GetTimestamp() - waiter.WaitingSince) * 1000.0 / System.Diagnostics.Stopwatch.Frequency;
        PriorityMetrics.RecordLongLockWait(scheduler.Name, context.Level, lockName, raised);
        if (PriorityEventSource.IsOn)
        {
            PriorityEventSource.Log.LockWaitLong(scheduler.Name, context.Level, lockName, waited, holders, raised ? 1 : 0, scheduler.InspectorId);
        }
        else if (!PriorityMetrics.LongLockWaits.Enabled)
        {
            // Nobody listens: one line per long wait, as for a stall, so that a lock that is never released is never silent.
            Console.Error.WriteLine(
                $"PriorityAsync: code at level {context.Level} of {scheduler.Subject} has waited {waited / 1000:F1} s for {lockName}, held by " +
                $"{holders}. " + (raised
                    ? "The holder runs at the waiter's level and still holds it: it is blocked (a synchronous wait) or its critical section is long."
                    : "The holder runs off this scheduler, so nothing could raise it: take the lock on the same scheduler as its waiters, or keep the critical section short."));
        }
    }

    private static (string Kind, string By) DescribeCause(object? cause) => cause switch
    {
        WaitEdge { Cause: Task } edge => ("join", $"{edge.From?.Describe() ?? "code"} at level {edge.Level}"),
        WaitEdge { Cause: PrioritySemaphore semaphore } edge => ("lock", $"{edge.From?.Describe() ?? "code"} at level {edge.Level}, waiting for {semaphore.Subject}"),
        IEscalationNode owner => ("owner", owner.Describe()),
        _ => ("owner", "its owner"),
    };

    // The closures are made here, not in FloorChanged, whose parameters they would capture: that would allocate on every call.
    private static Action StartedReport(IEscalationNode node, string work, int own, int floor, string kind, string by) =>
        () => Started(node, work, own, floor, kind, by);

    private static Action EndedReport(IEscalationNode node, string work, int own, int to, long start, long end) =>
        () => Ended(node, work, own, to, start, end);

    private static void Started(IEscalationNode node, string work, int own, int floor, string kind, string by)
    {
        PriorityScheduler scheduler = node.Scheduler;
        PriorityMetrics.RecordEscalation(scheduler.Name, own, floor, kind);
        if (PriorityEventSource.IsOn)
        {
            PriorityEventSource.Log.EscalationStarted(scheduler.Name, work, own, floor, kind, by, scheduler.InspectorId);
        }
    }

    private static void Ended(IEscalationNode node, string work, int own, int to, long start, long end)
    {
        PriorityScheduler scheduler = node.Scheduler;
        double seconds = (end - start) / (double)scheduler.TimestampFrequency;
        PriorityMetrics.RecordEscalationEnded(scheduler.Name, own, to, seconds);
        if (PriorityEventSource.IsOn)
        {
            PriorityEventSource.Log.EscalationEnded(scheduler.Name, work, own, to, seconds * 1000, scheduler.InspectorId);
        }

        PriorityTraceRecorder.Active?.RecordEscalation(scheduler, $"{work}: level {own} raised to {to}", start, end, to);
    }
}
