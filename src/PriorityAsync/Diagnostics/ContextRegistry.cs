using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The schedulers that are running (single loops and pools), for the observable instruments, and the one place that decides their
/// slow paths (<see cref="PriorityScheduler.SetSlowPaths"/>).
/// </summary>
/// <remarks>
/// <para>Invariant: a scheduler is in <see cref="Live"/> exactly from its start to its end ([O-SLOW]), so a finished scheduler is never
/// kept alive by the registry.</para>
/// <para>Writers (register, unregister, refresh) hold <see cref="s_lock"/> and publish a new array (copy on write), so a collecting
/// listener reads <see cref="Live"/> without a lock and never sees a torn list. Nothing here is on the hot path: one registration
/// per scheduler.</para>
/// <para>Metrics does not tell an instrument that a listener enabled it, so while any scheduler runs a timer re-reads the histograms'
/// flags every <see cref="RefreshPeriod"/> ([O-SLOW]).</para>
/// </remarks>
internal static class ContextRegistry
{
    /// <summary>How soon a listener that enables (or disables) a timing histogram takes effect in running schedulers.</summary>
    public static readonly TimeSpan RefreshPeriod = TimeSpan.FromSeconds(1);

    private static readonly Lock s_lock = new();
    private static PriorityScheduler[] s_live = [];
    private static Timer? s_refreshTimer;

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
            Volatile.Write(ref s_live, grown);
            context.SetSlowPaths(ComputeSlowPaths());
            if (s_refreshTimer is null)
            {
                // No ExecutionContext captured: the timer must not keep the first scheduler's AsyncLocals alive.
                using (ExecutionContext.SuppressFlow())
                {
                    s_refreshTimer = new Timer(static _ => Refresh(), null, RefreshPeriod, RefreshPeriod);
                }
            }
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
            if (shrunk.Length == 0)
            {
                s_refreshTimer?.Dispose();
                s_refreshTimer = null;
            }
        }
    }

    /// <summary>Re-reads what is listening and tells every running scheduler ([O-SLOW]). Any thread.</summary>
    public static void Refresh()
    {
        lock (s_lock)
        {
            int paths = ComputeSlowPaths();
            foreach (PriorityScheduler context in s_live)
            {
                context.SetSlowPaths(paths);
            }
        }
    }

    private static int ComputeSlowPaths() =>
        (PriorityMetrics.WaitDuration.Enabled ? SlowPaths.WaitTime : 0)
        | (PriorityMetrics.RunDuration.Enabled ? SlowPaths.RunTime : 0)
        | (PriorityEventSource.IsOn ? SlowPaths.EventSource : 0)
        | (PriorityTraceRecorder.Active is not null ? SlowPaths.Recorder : 0);
}
