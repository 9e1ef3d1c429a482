namespace PriorityAsync.Internal;

/// <summary>
/// The per-item slow path both schedulers share (the loop's <c>PriorityContext.InvokeObserved</c>, the pool threads'
/// <c>PriorityThreadPool.InvokeObserved</c>): the EventSource's start and stop around the item, the inspector's record of it, then its
/// run time and its trace slice. Each scheduler decides the start timestamp itself (the loop reuses the previous item's end) and
/// records the queue wait before.
/// </summary>
internal static class ObservedInvoke
{
    /// <summary>Runs <paramref name="item"/> with what <paramref name="paths"/> asks for around it; returns the end timestamp (0 when
    /// no timing bit is set). An exception from the item propagates after its slice is recorded. <c>thread</c>: the pool thread's
    /// index for the trace slice; -1 on a single loop.</summary>
    public static long Run(IObservedScheduler scheduler, int paths, in WorkItem item, int level, long start, int thread)
    {
        PriorityEventSource? events = (paths & SlowPaths.EventSource) != 0 ? PriorityEventSource.Log : null;
        InspectorState? inspection = (paths & SlowPaths.Inspect) != 0 ? scheduler.Inspection : null;
        string? name = events is null && inspection is null ? null : CallbackNames.Describe(item.Callback, item.State);
        int slot = thread < 0 ? 0 : thread;
        events?.WorkItemStart(scheduler.Name, level, name!);
        inspection?.Begin(slot, level, name!, start);
        long end = 0;
        try
        {
            item.Invoke();
        }
        finally
        {
            events?.WorkItemStop(scheduler.Name, level);
            if ((paths & SlowPaths.Timed) != 0)
            {
                end = scheduler.Timestamp();
                if ((paths & SlowPaths.RunTime) != 0)
                {
                    PriorityMetrics.RecordRun(scheduler, level, end - start);
                }

                if ((paths & SlowPaths.Recorder) != 0)
                {
                    PriorityTraceRecorder.Active?.Record(scheduler, thread, level, item.Callback, item.State, start, end);
                }

                if (inspection is not null)
                {
                    inspection.End(slot);
                    if ((paths & SlowPaths.InspectAll) != 0 && !inspection.CountObserved())
                    {
                        scheduler.StopInspectingAll(); // the period's budget is spent: one sample per period from now on
                    }

                    InspectorSampler.ReportItem(scheduler, inspection, slot, level, name!, in item, start, end, sampled: (paths & SlowPaths.InspectAll) == 0);
                }
            }
        }

        return end;
    }
}
