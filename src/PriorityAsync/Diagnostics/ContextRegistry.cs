using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The schedulers that are running (single loops and pools), for the observable instruments, and the one place that decides their
/// slow paths (<see cref="PriorityScheduler.SetSlowPaths"/>).
/// </summary>
/// <remarks>
/// <para>Invariant: a scheduler is in <see cref="Live"/> exactly from the start of its loop to its end (RunLoop registers a context
/// before the first item and unregisters it in its <c>finally</c>; a pool registers before it starts its threads and unregisters when
/// its last thread ends), so a finished scheduler is never kept alive by the registry.</para>
/// <para>Writers (register, unregister, refresh) hold <see cref="s_lock"/> and publish a new array (copy on write), so a collecting
/// listener reads <see cref="Live"/> without a lock and never sees a torn list. Nothing here is on the hot path: one registration
/// per loop.</para>
/// <para><c>System.Diagnostics.Metrics</c> does not tell an instrument that a listener enabled it, so the histograms'
/// <c>Enabled</c> flags are read where it costs nothing ([O-SLOW]): when a scheduler starts, when one of its threads wakes from a
/// park, at each check of the stall watchdog's thread, and when a listener collects the observable instruments. No timer runs for
/// it: an idle process pays nothing. The EventSource and the trace recorder refresh at once when they are turned on or off.</para>
/// </remarks>
internal static class ContextRegistry
{
    private static readonly Lock s_lock = new();
    private static PriorityScheduler[] s_live = [];
    private static int s_lastId;

    // The histograms' bits as last applied (written under s_lock, read without it): what RefreshIfListenersChanged compares with.
    private static int s_metricPaths;

    /// <summary>The running schedulers: an immutable snapshot, any thread.</summary>
    public static PriorityScheduler[] Live => Volatile.Read(ref s_live);

    public static void Register(PriorityScheduler context)
    {
        lock (s_lock)
        {
            PriorityScheduler[] live = s_live;
            var grown = new PriorityScheduler[live.Length + 1];
            live.CopyTo(grown, 0);
            grown[^1] = context;
            context.InspectorId = ++s_lastId; // the inspector's events tell schedulers apart by it (names need not be unique)
            if (InspectorSampler.IsOn)
            {
                InspectorSampler.StateOf(context, refresh: false); // the slow paths are set just below
            }

            Volatile.Write(ref s_live, grown);
            context.SetSlowPaths(ApplyMetricPaths() | OtherPaths(context));
        }
    }

    public static void Unregister(PriorityScheduler context)
    {
        lock (s_lock)
        {
            PriorityScheduler[] live = s_live;
            int index = Array.IndexOf(live, context);
            if (index < 0)
            {
                return;
            }

            var shrunk = new PriorityScheduler[live.Length - 1];
            Array.Copy(live, 0, shrunk, 0, index);
            Array.Copy(live, index + 1, shrunk, index, live.Length - index - 1);
            Volatile.Write(ref s_live, shrunk);
            context.SetSlowPaths(SlowPaths.None);
            if (context.Inspection is not null && PriorityEventSource.InspectorOn)
            {
                PriorityEventSource.Log.SchedulerStopped(context.InspectorId, context.Name);
            }

            context.Inspection = null;
        }
    }

    /// <summary>
    /// Whether a <c>MeterListener</c> enabled or disabled a timing histogram since the slow paths were last computed, and if so
    /// recomputes them ([O-SLOW]). Any thread; two flags read and compared with the bits last applied, no lock, no allocation: cheap
    /// enough for a thread that wakes from a park, the watchdog's checks and a listener's collection.
    /// </summary>
    public static void RefreshIfListenersChanged()
    {
        if (MetricPaths() != Volatile.Read(ref s_metricPaths))
        {
            Refresh();
        }
    }

    /// <summary>Re-reads what is listening and tells every running loop. Any thread.</summary>
    public static void Refresh()
    {
        lock (s_lock)
        {
            int metrics = ApplyMetricPaths();
            foreach (PriorityScheduler context in s_live)
            {
                context.SetSlowPaths(metrics | OtherPaths(context));
            }
        }
    }

    /// <summary>Re-reads what is listening and tells <paramref name="context"/> (the inspector changed how it observes it). Any thread.</summary>
    public static void Refresh(PriorityScheduler context)
    {
        lock (s_lock)
        {
            if (Array.IndexOf(s_live, context) >= 0)
            {
                context.SetSlowPaths(ApplyMetricPaths() | OtherPaths(context));
            }
        }
    }

    // Under s_lock: the histograms' bits, published as they are applied for RefreshIfListenersChanged to compare with. (A refresh
    // that reads a flag a listener changes meanwhile publishes what it applied: the next comparison sees the change.)
    private static int ApplyMetricPaths()
    {
        int metrics = MetricPaths();
        Volatile.Write(ref s_metricPaths, metrics);
        return metrics;
    }

    private static int MetricPaths() =>
        (PriorityMetrics.WaitDuration.Enabled ? SlowPaths.WaitTime | SlowPaths.WaitHistogram : 0)
        | (PriorityMetrics.RunDuration.Enabled ? SlowPaths.RunTime : 0);

    // The inspector's one-shot bit (SlowPaths.InspectOne) is never computed here: the sampler sets it with an interlocked OR, and a
    // refresh that overwrites it costs that period its one sample, nothing else.
    private static int OtherPaths(PriorityScheduler context) =>
        (PriorityEventSource.ItemsOn ? SlowPaths.EventSource : 0)
        | (PriorityTraceRecorder.Active is not null ? SlowPaths.Recorder : 0)
        | (PriorityEventSource.InspectorOn && context.Inspection is { AllItems: true } ? SlowPaths.InspectAll | SlowPaths.WaitTime : 0);
}
