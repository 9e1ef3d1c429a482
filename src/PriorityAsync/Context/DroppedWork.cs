using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// What both schedulers do with an item they will never run, apart from counting it and raising their own WorkDropped: record it on
/// the meter and the event source, and release whoever waits on it, so that nothing hangs (a blocked <c>Send</c>, an awaiting method,
/// an <c>InvokeAsync</c> task, a pending <see cref="Priority.Delay"/>).
/// </summary>
internal static class DroppedWork
{
    /// <summary>Records the drop on the <c>PriorityAsync</c> meter and event source (when someone listens).</summary>
    public static void Record(string schedulerName, int level, DropReason reason, SendOrPostCallback callback, object? state)
    {
        if (PriorityMetrics.Dropped.Enabled || PriorityEventSource.IsOn)
        {
            string method = CallbackNames.Describe(callback, state);
            PriorityMetrics.RecordDrop(schedulerName, level, reason, method);
            if (PriorityEventSource.IsOn)
            {
                PriorityEventSource.Log.WorkDropped(schedulerName, level, PriorityMetrics.DropReasonName(reason), method);
            }
        }
    }

    /// <summary>Releases whoever waits on <paramref name="item"/>.</summary>
    public static void Release(in WorkItem item)
    {
        if (item.Callback == SendWaiter.RunCallback)
        {
            ((SendWaiter)item.State!).Abandon();
        }
        else if (item.Callback == PriorityScheduler.s_runContinuation)
        {
            // Resume the awaiting method elsewhere, in the context it was queued with; its GetResult throws ObjectDisposedException,
            // so it does not hang forever.
            ThreadPool.UnsafeQueueUserWorkItem(static dropped => dropped.Invoke(), item, preferLocal: false);
        }
        else if (item.Callback == IInvokeOperation.RunCallback)
        {
            ((IInvokeOperation)item.State!).Abandon(); // InvokeAsync: its task faults, it does not hang
        }
        else if (item.Callback == LockWaiter.ResumeCallback)
        {
            ((LockWaiter)item.State!).OnResumeDropped(); // a granted lock's holder: the holding ends, and its await throws elsewhere
        }
        else if (item.Callback == TimerEntry.FireCallback)
        {
            ((TimerEntry)item.State!).OnDropped(); // a queued timer firing; a pending Priority.Delay resumes with ObjectDisposedException
        }
    }
}
