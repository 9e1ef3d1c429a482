using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The inspector's sampler: while a session enables the <c>Inspector</c> keyword of the <c>PriorityAsync</c> event source, a dedicated
/// background thread (never the thread pool: a starved pool must not silence it) writes every scheduler's state once per period and
/// decides, per scheduler, whether every item is observed or one per period. It ends within a period once the last such session
/// stops, and then nothing of it is left in the process.
/// </summary>
/// <remarks>
/// <para>Nothing here touches the hot path: the sampler reads counters the schedulers keep anyway, and what it asks of them goes
/// through each scheduler's slow-path bits (<see cref="SlowPaths.InspectAll"/>, <see cref="SlowPaths.InspectOne"/>), which the fast path
/// reads once per item already. docs/inspector.md, "Sampling", gives the rule and its cost.</para>
/// <para>The session may pass two arguments (EventPipe provider arguments, or an <see cref="System.Diagnostics.Tracing.EventListener"/>'s):
/// <c>SamplePeriodMs</c> (10 to 1000, default 50) and <c>AllItemsBelow</c> (items per second under which every item of a scheduler is
/// observed; 0 to 1,000,000, default 20,000).</para>
/// </remarks>
internal static class InspectorSampler
{
    public const int DefaultPeriodMilliseconds = 50;
    public const int DefaultAllItemsBelow = 20_000;

    private static readonly Lock s_lock = new();
    private static int s_periodMilliseconds = DefaultPeriodMilliseconds;
    private static int s_allItemsBelow = DefaultAllItemsBelow;
    private static int s_generation;
    private static bool s_on;
    private static AutoResetEvent? s_stop;

    /// <summary>Whether the sampler runs (the registry then creates the inspector state of a scheduler that starts).</summary>
    public static bool IsOn => Volatile.Read(ref s_on);

    public static int PeriodMilliseconds => Volatile.Read(ref s_periodMilliseconds);

    /// <summary>Reads the session's arguments; a value that is not a number in range is ignored (the default stays).</summary>
    public static void Configure(IDictionary<string, string?> arguments)
    {
        if (arguments.TryGetValue("SamplePeriodMs", out string? period) && TryParse(period, 10, 1000, out int periodValue))
        {
            Volatile.Write(ref s_periodMilliseconds, periodValue);
        }

        if (arguments.TryGetValue("AllItemsBelow", out string? below) && TryParse(below, 0, 1_000_000, out int belowValue))
        {
            Volatile.Write(ref s_allItemsBelow, belowValue);
        }
    }

    /// <summary>Starts or stops the sampler thread (from the event source's commands, any thread).</summary>
    public static void Update(bool on)
    {
        lock (s_lock)
        {
            if (on == s_on)
            {
                return;
            }

            s_on = on;
            int generation = ++s_generation;
            if (on)
            {
                var stop = new AutoResetEvent(false);
                s_stop = stop;

                // No ExecutionContext captured: the thread must not keep the enabling thread's AsyncLocals alive.
                using (ExecutionContext.SuppressFlow())
                {
                    var thread = new Thread(() => Run(generation, stop))
                    {
                        IsBackground = true,
                        Name = "PriorityAsync inspector sampler",
                    };
                    thread.Start();
                }
            }
            else
            {
                s_stop?.Set();
                s_stop = null;
                Volatile.Write(ref s_periodMilliseconds, DefaultPeriodMilliseconds);
                Volatile.Write(ref s_allItemsBelow, DefaultAllItemsBelow);
            }

            // Under the lock, as StateOf's publication: a state made by a tick still running is never left behind.
            foreach (PriorityScheduler scheduler in ContextRegistry.Live)
            {
                if (on)
                {
                    StateOf(scheduler, refresh: false); // before the event source's refresh, which then sets every item observed
                }
                else
                {
                    scheduler.Inspection = null; // nothing kept once nobody inspects
                }
            }
        }
    }



    /// <summary>The inspector state of <paramref name="scheduler"/>, created on first use (then its slow paths are recomputed, unless
    /// the caller does it: a new state observes every item).</summary>
    public static InspectorState StateOf(PriorityScheduler scheduler, bool refresh = true)
    {
        InspectorState? state = scheduler.Inspection;
        if (state is null)
        {
            state = new InspectorState(scheduler.InspectorId, scheduler.Threads.Length);
            lock (s_lock)
            {
                if (!s_on)
                {
                    return state; // the sampler stopped meanwhile: used once, kept nowhere
                }

                scheduler.Inspection = state;
            }

            if (refresh)
            {
                ContextRegistry.Refresh(scheduler);
            }
        }

        return state;
    }

    /// <summary>An observed item ended: its <see cref="PriorityEventSource.ItemRun"/> event.</summary>
    public static void ReportItem(PriorityScheduler scheduler, InspectorState state, int thread, int level, string method, in WorkItem item, long start, long end, bool sampled)
    {
        PriorityEventSource log = PriorityEventSource.Log;
        if (!PriorityEventSource.InspectorOn)
        {
            return;
        }

        double frequency = scheduler.TimestampFrequency;
        double runMilliseconds = (end - start) * 1000 / frequency;
        double waitMilliseconds = item.EnqueuedAt != 0 && start >= item.EnqueuedAt ? (start - item.EnqueuedAt) * 1000 / frequency : -1;
        double lateMilliseconds = -1;
        if (item.Callback == TimerEntry.FireCallback && item.State is TimerEntry entry && entry.Timers.Clock is null)
        {
            // A periodic entry was re-armed as it came due (LoopTimers.FireDue): the firing that runs now was due one period earlier.
            long due = entry.Period > 0 ? entry.Due - entry.Period : entry.Due;
            double sinceDue = (Stopwatch.GetTimestamp() - due) * 1000.0 / Stopwatch.Frequency;
            lateMilliseconds = Math.Max(0, sinceDue - runMilliseconds);
        }

        log.ItemRun(state.Id, thread, level, method, runMilliseconds, waitMilliseconds, lateMilliseconds, sampled ? 1 : 0);
    }

    private static void Run(int generation, AutoResetEvent stop)
    {
        try
        {
            while (Volatile.Read(ref s_generation) == generation)
            {
                PriorityEventSource log = PriorityEventSource.Log;
                if (log is not null && PriorityEventSource.InspectorOn)
                {
                    int period = PeriodMilliseconds;
                    int below = Volatile.Read(ref s_allItemsBelow);
                    foreach (PriorityScheduler scheduler in ContextRegistry.Live)
                    {
                        StateOf(scheduler).Tick(scheduler, log, below, period);
                    }
                }

                if (stop.WaitOne(PeriodMilliseconds))
                {
                    break;
                }
            }
        }
        finally
        {
            stop.Dispose();
        }
    }

    private static bool TryParse(string? text, int min, int max, out int value) =>
        int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out value) && value >= min && value <= max;
}
