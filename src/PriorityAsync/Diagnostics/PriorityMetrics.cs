using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace PriorityAsync.Internal;

/// <summary>
/// The library's instruments, on the meter named <see cref="MeterName"/>; docs/observability.md lists them with their units and tags.
/// </summary>
/// <remarks>
/// <para>Cost. The observable instruments read counters the schedulers keep anyway (items run per level, queue counts), only when a
/// listener collects. The counters (drops, exceptions, stalls) record on paths that are already slow. The two histograms need clock
/// readings per item: a scheduler takes them only while a listener enables them, which it learns without a timer ([O-SLOW]).</para>
/// <para>Names follow the OpenTelemetry semantic-convention style of the runtime's own <c>dotnet.thread_pool.*</c> instruments.
/// The two stall instruments keep the names they were published with (dashboards and alerts use them).</para>
/// </remarks>
internal static class PriorityMetrics
{
    /// <summary>The meter name to subscribe to (for example <c>dotnet-counters monitor --counters PriorityAsync</c>).</summary>
    public const string MeterName = "PriorityAsync";

    /// <summary>Tag: the <see cref="PriorityScheduler.Name"/> of the scheduler.</summary>
    public const string ContextTag = "priorityasync.context";

    /// <summary>Tag of the per-scheduler instruments (the observable ones and the two histograms): <c>PriorityContext</c> (the
    /// single loop) or <c>PriorityThreadPool</c>.</summary>
    public const string SchedulerKindTag = "priorityasync.scheduler.kind";

    /// <summary>Tag: the level.</summary>
    public const string LevelTag = "priorityasync.level";

    /// <summary>Tag of dropped items: why (<see cref="DropReason"/>, snake case).</summary>
    public const string DropReasonTag = "priorityasync.drop.reason";

    /// <summary>Tag of exceptions: the exception's full type name (the semantic conventions' <c>error.type</c>).</summary>
    public const string ErrorTypeTag = "error.type";

    /// <summary>Tag of exceptions: <c>handled</c> (a handler set Handled; the scheduler went on) or <c>unhandled</c> (it faulted).</summary>
    public const string ExceptionResultTag = "priorityasync.exception.result";

    /// <summary>Tag of dropped items and faulted work: the code, as <c>Type.Method</c> (an async method by its own name).</summary>
    public const string MethodTag = "priorityasync.method";

    /// <summary>Tag of faulted work: how it was started (<c>InvokeAsync</c>, <c>PriorityTaskController.Run</c>, <c>TaskScope.Start</c>).</summary>
    public const string WorkKindTag = "priorityasync.work.kind";

    /// <summary>Tag of escalations: the raised work's own level (the escalation's <see cref="LevelTag"/> is the level it was raised to).</summary>
    public const string FromLevelTag = "priorityasync.escalation.from_level";

    /// <summary>Tag of escalations: what raised the work (<c>join</c>: code awaited it; <c>lock</c>: code waited on a lock its region
    /// holds; <c>owner</c>: the work it belongs to was raised).</summary>
    public const string CauseTag = "priorityasync.escalation.cause";

    /// <summary>Tag of long lock waits: the lock's name (its kind when unnamed).</summary>
    public const string LockTag = "priorityasync.lock";

    /// <summary>Tag of long lock waits: whether the holders could be raised (<c>true</c>: they were, and still hold it; <c>false</c>: off
    /// the waiter's scheduler).</summary>
    public const string HolderRaisedTag = "priorityasync.lock.holder_raised";

    // Bucket boundaries for item durations: the OpenTelemetry defaults (0 to 10,000) suit milliseconds, not seconds of items that
    // typically take microseconds.
    private static readonly double[] s_durationBuckets =
        [0.000_001, 0.000_002_5, 0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

    // Boxed once: a tag value is an object, and boxing the level per measurement would allocate per item.
    private static readonly KeyValuePair<string, object?>[] s_levelTags = CreateLevelTags();

    private static readonly Meter s_meter = new(MeterName, typeof(PriorityMetrics).Assembly.GetName().Version?.ToString());

    /// <summary>Items started, per scheduler and level (counter, from the schedulers' own counts).</summary>
    public static readonly ObservableCounter<long> WorkItemCount = s_meter.CreateObservableCounter(
        "priorityasync.work_item.count",
        ObserveWorkItemCount,
        unit: "{work_item}",
        description: "The number of work items the loop has started since it started, per level.");

    /// <summary>Items waiting, per scheduler and level (an up-down counter, like <c>dotnet.thread_pool.queue.length</c>).</summary>
    public static readonly ObservableUpDownCounter<long> QueueLength = s_meter.CreateObservableUpDownCounter(
        "priorityasync.queue.length",
        ObserveQueueLength,
        unit: "{work_item}",
        description: "The number of work items queued and not yet started, per level.");

    /// <summary>Items running now, per pool and level (an up-down counter; the single loop runs one item at most and reports none).</summary>
    public static readonly ObservableUpDownCounter<long> Running = s_meter.CreateObservableUpDownCounter(
        "priorityasync.work_item.running",
        ObserveRunning,
        unit: "{work_item}",
        description: "The number of work items running now, per level (PriorityThreadPool: summed over its threads).");

    /// <summary>Seconds from an item's post to its start; needs a clock reading at post and one at start.</summary>
    public static readonly Histogram<double> WaitDuration = s_meter.CreateHistogram(
        "priorityasync.work_item.wait.duration",
        unit: "s",
        description: "The time a work item spent queued, from its post to the start of its run.",
        tags: null,
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = s_durationBuckets });

    /// <summary>Seconds an item ran (up to its first await that did not complete at once).</summary>
    public static readonly Histogram<double> RunDuration = s_meter.CreateHistogram(
        "priorityasync.work_item.run.duration",
        unit: "s",
        description: "The time the loop spent running a work item (one synchronous slice of an async method).",
        tags: null,
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = s_durationBuckets });

    /// <summary>Items a scheduler will never run (see <see cref="PriorityScheduler.WorkDropped"/>).</summary>
    public static readonly Counter<long> Dropped = s_meter.CreateCounter<long>(
        "priorityasync.work_item.dropped",
        unit: "{work_item}",
        description: "The number of work items dropped: posted after the context completed, or still queued when it faulted.");

    /// <summary>Exceptions that escaped a callback (see <see cref="PriorityScheduler.UnhandledException"/>).</summary>
    public static readonly Counter<long> Exceptions = s_meter.CreateCounter<long>(
        "priorityasync.exceptions",
        unit: "{exception}",
        description: "The number of exceptions that escaped a work item (typically an async void method), handled or not.");

    /// <summary>Work started with a delegate whose task faulted (see <see cref="WorkFaults"/>), whoever awaits it.</summary>
    public static readonly Counter<long> WorkFaulted = s_meter.CreateCounter<long>(
        "priorityasync.work.faulted",
        unit: "{exception}",
        description: "The number of exceptions that ended work started with InvokeAsync, PriorityTaskController.Run or TaskScope.Start.");

    /// <summary>Stalls detected by the watchdog; one per stall, however long it lasts.</summary>
    public static readonly Counter<long> Stalls = s_meter.CreateCounter<long>(
        "priorityasync.stalls",
        unit: "{stall}",
        description: "Times the loop started no item for longer than the stall timeout while work was waiting.");

    /// <summary>How long work had been waiting when a stall was reported (see <see cref="StallDetectedEventArgs.WaitingFor"/>).</summary>
    public static readonly Histogram<double> StallWaitingTime = s_meter.CreateHistogram<double>(
        "priorityasync.stall.waiting_time",
        unit: "s",
        description: "How long work had been waiting, without the loop starting any item, when a stall was reported.");

    /// <summary>Work raised above its own level ([X-SEEN]): once per escalation, when it begins (or rises further).</summary>
    public static readonly Counter<long> Escalations = s_meter.CreateCounter<long>(
        "priorityasync.escalations",
        unit: "{escalation}",
        description: "Times work was raised above its own level because more urgent code waited on it (a join, a lock it holds, its owner).");

    /// <summary>How long work stayed raised.</summary>
    public static readonly Histogram<double> EscalationDuration = s_meter.CreateHistogram(
        "priorityasync.escalation.duration",
        unit: "s",
        description: "How long work stayed raised above its own level, from its raise to its drop back.",
        tags: null,
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = s_durationBuckets });

    /// <summary>Lock waits that lasted the waiter's stall timeout ([X-SEEN]).</summary>
    public static readonly Counter<long> LongLockWaits = s_meter.CreateCounter<long>(
        "priorityasync.lock.long_waits",
        unit: "{wait}",
        description: "Waits on a PriorityLock or PrioritySemaphore that lasted the waiter's stall timeout: the holder could not be raised, or did not release.");

    public static KeyValuePair<string, object?> LevelTagOf(int level) => s_levelTags[level];

    public static void RecordEscalation(string contextName, int fromLevel, int toLevel, string cause)
    {
        if (Escalations.Enabled)
        {
            var tags = new TagList { { ContextTag, contextName }, s_levelTags[toLevel], { FromLevelTag, fromLevel }, { CauseTag, cause } };
            Escalations.Add(1, in tags);
        }
    }

    public static void RecordEscalationEnded(string contextName, int fromLevel, int toLevel, double seconds)
    {
        if (EscalationDuration.Enabled)
        {
            var tags = new TagList { { ContextTag, contextName }, s_levelTags[toLevel], { FromLevelTag, fromLevel } };
            EscalationDuration.Record(seconds, in tags);
        }
    }

    public static void RecordLongLockWait(string contextName, int level, string lockName, bool holderRaised)
    {
        if (LongLockWaits.Enabled)
        {
            var tags = new TagList { { ContextTag, contextName }, s_levelTags[level], { LockTag, lockName }, { HolderRaisedTag, holderRaised } };
            LongLockWaits.Add(1, in tags);
        }
    }

    public static void RecordWait(PriorityScheduler scheduler, int level, long ticks) =>
        WaitDuration.Record(ticks / (double)scheduler.TimestampFrequency, new(ContextTag, scheduler.Name), new(SchedulerKindTag, scheduler.Kind), s_levelTags[level]);

    public static void RecordRun(PriorityScheduler scheduler, int level, long ticks) =>
        RunDuration.Record(ticks / (double)scheduler.TimestampFrequency, new(ContextTag, scheduler.Name), new(SchedulerKindTag, scheduler.Kind), s_levelTags[level]);

    public static void RecordDrop(string contextName, int level, DropReason reason, string method)
    {
        if (Dropped.Enabled)
        {
            var tags = new TagList
            {
                { ContextTag, contextName },
                s_levelTags[level],
                { DropReasonTag, DropReasonName(reason) },
                { MethodTag, method },
            };
            Dropped.Add(1, in tags);
        }
    }

    /// <summary>The snake-case name of a drop reason, as the metric and the event source write it.</summary>
    public static string DropReasonName(DropReason reason) => reason switch
    {
        DropReason.AbandonedAfterFault => "abandoned_after_fault",
        DropReason.Cancelled => "cancelled",
        DropReason.TimerArmedAtFinish => "timer_armed_at_finish",
        _ => "posted_after_completion",
    };

    public static void RecordWorkFaulted(string contextName, int level, string kind, string method, Exception exception)
    {
        if (WorkFaulted.Enabled)
        {
            var tags = new TagList
            {
                { ContextTag, contextName },
                s_levelTags[level],
                { WorkKindTag, kind },
                { MethodTag, method },
                { ErrorTypeTag, exception.GetType().FullName },
            };
            WorkFaulted.Add(1, in tags);
        }
    }

    public static void RecordException(string contextName, int level, Exception exception, bool handled)
    {
        if (PriorityEventSource.IsOn)
        {
            PriorityEventSource.Log.ExceptionEscaped(contextName, level, exception.GetType().FullName ?? exception.GetType().Name, exception.Message, handled ? 1 : 0);
        }

        if (Exceptions.Enabled)
        {
            var tags = new TagList
            {
                { ContextTag, contextName },
                s_levelTags[level],
                { ErrorTypeTag, exception.GetType().FullName },
                { ExceptionResultTag, handled ? "handled" : "unhandled" },
            };
            Exceptions.Add(1, in tags);
        }
    }

    public static void RecordStall(string contextName, int level, TimeSpan waitingFor)
    {
        if (!Stalls.Enabled && !StallWaitingTime.Enabled)
        {
            return;
        }

        var tags = new KeyValuePair<string, object?>[]
        {
            new(ContextTag, contextName),
            s_levelTags[level],
        };
        Stalls.Add(1, tags);
        StallWaitingTime.Record(waitingFor.TotalSeconds, tags);
    }

    private static List<Measurement<long>> ObserveWorkItemCount() => Observe(static (scheduler, level) => scheduler.GetRun(level));

    private static List<Measurement<long>> ObserveQueueLength() => Observe(static (scheduler, level) => scheduler.GetQueued(level));

    private static List<Measurement<long>> ObserveRunning() => Observe(static (scheduler, level) => scheduler.GetRunning(level));

    /// <summary>One measurement per live scheduler and level (a negative value: the scheduler does not report that instrument).</summary>
    private static List<Measurement<long>> Observe(Func<PriorityScheduler, int, long> read)
    {
        ContextRegistry.RefreshIfListenersChanged(); // a collecting listener (dotnet-counters, OpenTelemetry) has usually enabled the histograms too ([O-SLOW])
        var measurements = new List<Measurement<long>>();
        foreach (PriorityScheduler scheduler in ContextRegistry.Live)
        {
            for (int level = 0; level < scheduler.Levels; level++)
            {
                long value = read(scheduler, level);
                if (value >= 0)
                {
                    measurements.Add(new Measurement<long>(value, new(ContextTag, scheduler.Name), new(SchedulerKindTag, scheduler.Kind), s_levelTags[level]));
                }
            }
        }

        return measurements;
    }

    private static KeyValuePair<string, object?>[] CreateLevelTags()
    {
        var tags = new KeyValuePair<string, object?>[PriorityContextOptions.MaxLevels];
        for (int level = 0; level < tags.Length; level++)
        {
            tags[level] = new(LevelTag, level);
        }

        return tags;
    }
}
