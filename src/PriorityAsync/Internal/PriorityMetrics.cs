using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace PriorityAsync.Internal;

/// <summary>
/// The library's instruments, on the meter named <see cref="MeterName"/>. Instruments cost nothing while no listener is attached, and
/// only the watchdog records into them: nothing here is on the post or dispatch path.
/// </summary>
internal static class PriorityMetrics
{
    /// <summary>The meter name to subscribe to (for example <c>dotnet-counters monitor --counters PriorityAsync</c>).</summary>
    public const string MeterName = "PriorityAsync";

    /// <summary>Tag: the <see cref="PriorityContext.Name"/> of the context.</summary>
    public const string ContextTag = "priorityasync.context";

    /// <summary>Tag: the level.</summary>
    public const string LevelTag = "priorityasync.level";

    private static readonly Meter s_meter = new(MeterName, typeof(PriorityMetrics).Assembly.GetName().Version?.ToString());

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

    public static void RecordStall(string contextName, int level, TimeSpan waitingFor)
    {
        if (!Stalls.Enabled && !StallWaitingTime.Enabled)
        {
            return;
        }

        var tags = new KeyValuePair<string, object?>[]
        {
            new(ContextTag, contextName),
            new(LevelTag, level),
        };
        Stalls.Add(1, tags);
        StallWaitingTime.Record(waitingFor.TotalSeconds, tags);
    }
}
