using System;
using System.Collections.Generic;

namespace PriorityAsync.Internal;

/// <summary>
/// Reports work that ended with an exception where no loop callback sees it: a task of <c>InvokeAsync</c>, of a controller's <c>Run</c>,
/// or a scope's child. Each fault is recorded on the <c>PriorityAsync</c> meter (<c>priorityasync.work.faulted</c>) and written to the
/// <c>PriorityAsync</c> event source (<c>WorkFaulted</c>), with the work's name, whether or not anyone awaits the task: when the task
/// faults nobody can tell whether it will be awaited, and a report that might be redundant beats a silent loss.
/// </summary>
internal static class WorkFaults
{
    public static void Report(string schedulerName, int level, string kind, string method, IReadOnlyCollection<Exception> exceptions)
    {
        foreach (Exception exception in exceptions)
        {
            PriorityMetrics.RecordWorkFaulted(schedulerName, level, kind, method, exception);
            if (PriorityEventSource.IsOn)
            {
                PriorityEventSource.Log.WorkFaulted(schedulerName, level, kind, method, exception.GetType().FullName ?? exception.GetType().Name, exception.Message);
            }
        }
    }
}
