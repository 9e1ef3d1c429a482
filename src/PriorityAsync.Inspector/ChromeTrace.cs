using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.Json;

namespace PriorityAsync.Inspector;

/// <summary>
/// Writes a recording's observed items in the Chrome trace event format, as <c>PriorityTraceRecorder</c> does in process (opens in
/// Perfetto and <c>chrome://tracing</c>): one track per loop and level, one per pool thread; faults, drops, exceptions and stalls as
/// instant events; escalations as slices on one more track per scheduler (<c>name / escalations</c>, as the in-process recorder draws
/// them), long lock waits as instant events. Only observed items are there: every item while a scheduler's rate was low, one per
/// sample period while high.
/// </summary>
internal static class ChromeTrace
{
    public static int Write(string recordingPath, Stream destination)
    {
        var schedulers = new Dictionary<int, (string Name, string Kind)>();
        var slices = new List<(int Scheduler, int Thread, int Level, string Method, double EndMs, double RunMs, bool Sampled)>();
        var instants = new List<(string Scheduler, string Kind, string Text, double AtMs)>();
        var escalations = new List<(int Scheduler, Escalation Escalation)>();
        var raised = new Dictionary<int, EscalationTracker>();
        double lastMs = 0;
        var model = new InspectorModel();
        using (FileStream file = File.OpenRead(recordingPath))
        {
            EventStreamReader.Read(file, model, data =>
            {
                var payload = new TracePayload(data);
                lastMs = Math.Max(lastMs, data.TimeStampRelativeMSec);
                switch (data.EventName)
                {
                    case "SchedulerInfo":
                        schedulers[payload.Int("schedulerId")] = (payload.String("scheduler"), payload.String("kind"));
                        break;
                    case "ItemRun":
                        slices.Add((payload.Int("schedulerId"), payload.Int("thread"), payload.Int("level"), payload.String("method"),
                            data.TimeStampRelativeMSec, payload.Double("runMilliseconds"), payload.Int("sampled") != 0));
                        break;
                    case "EscalationStarted":
                        Tracker(raised, payload.Int("schedulerId")).Started(data.TimeStampRelativeMSec, payload.String("work"), payload.Int("fromLevel"),
                            payload.Int("toLevel"), payload.String("cause"), payload.String("by"));
                        break;
                    case "EscalationEnded":
                        escalations.Add((payload.Int("schedulerId"), Tracker(raised, payload.Int("schedulerId")).Ended(data.TimeStampRelativeMSec,
                            payload.String("work"), payload.Int("fromLevel"), payload.Int("toLevel"), payload.Double("raisedForMilliseconds"))));
                        break;
                    case "LockWaitLong":
                        instants.Add((payload.String("context"), data.EventName,
                            $"code at level {payload.Int("level")} has waited {InspectorModel.Ms(payload.Double("waitedMilliseconds"))} for {payload.String("lockName")}, " +
                            $"held by {payload.String("holders")} ({(payload.Int("holderRaised") != 0 ? "raised, still holding" : "could not be raised")})",
                            data.TimeStampRelativeMSec));
                        break;
                    case "WorkFaulted" or "WorkDropped" or "StallDetected" or "ExceptionEscaped":
                        instants.Add((payload.String("context"), data.EventName, data.FormattedMessage ?? data.EventName, data.TimeStampRelativeMSec));
                        break;
                }
            });
        }

        using var json = new Utf8JsonWriter(destination);
        json.WriteStartObject();
        json.WriteString("displayTimeUnit", "ms");
        json.WriteStartArray("traceEvents");
        var tracks = new HashSet<int>();
        foreach ((int scheduler, int thread, int level, string method, double endMs, double runMs, bool sampled) in slices)
        {
            (string name, string kind) = schedulers.TryGetValue(scheduler, out var info) ? info : ($"scheduler {scheduler}", "?");
            bool pool = kind == "PriorityThreadPool";
            int tid = (scheduler * 1000) + (pool ? 500 + thread : level) + 1;
            if (tracks.Add(tid))
            {
                WriteTrackName(json, tid, pool ? $"{name} #{thread}" : $"{name} / level {level}");
            }

            json.WriteStartObject();
            json.WriteString("name", method);
            json.WriteString("cat", "level " + level.ToString(System.Globalization.CultureInfo.InvariantCulture));
            json.WriteString("ph", "X");
            json.WriteNumber("ts", Math.Round((endMs - runMs) * 1000, 3));
            json.WriteNumber("dur", Math.Round(runMs * 1000, 3));
            json.WriteNumber("pid", 1);
            json.WriteNumber("tid", tid);
            json.WriteStartObject("args");
            json.WriteString("context", name);
            json.WriteString("kind", kind);
            json.WriteNumber("level", level);
            if (pool)
            {
                json.WriteNumber("thread", thread);
            }

            json.WriteBoolean("sampled", sampled);
            json.WriteEndObject();
            json.WriteEndObject();
        }

        // Still raised when the recording ended: a slice to its last event, marked ongoing.
        foreach ((int scheduler, EscalationTracker tracker) in raised)
        {
            escalations.AddRange(tracker.InForce.Select(e => (scheduler, e)));
        }

        foreach ((int scheduler, Escalation escalation) in escalations)
        {
            string name = schedulers.TryGetValue(scheduler, out var info) ? info.Name : $"scheduler {scheduler}";
            int tid = (scheduler * 1000) + 999; // past a scheduler's levels (at most 64) and pool threads (500 + at most 256)
            if (tracks.Add(tid))
            {
                WriteTrackName(json, tid, $"{name} / escalations");
            }

            double endMs = escalation.EndMs ?? lastMs;
            json.WriteStartObject();
            json.WriteString("name", $"{escalation.Work}: level {escalation.FromLevel} raised to {escalation.ToLevel}");
            json.WriteString("cat", "escalation");
            json.WriteString("ph", "X");
            json.WriteNumber("ts", Math.Round(escalation.StartMs * 1000, 3));
            json.WriteNumber("dur", Math.Round(Math.Max(0, endMs - escalation.StartMs) * 1000, 3));
            json.WriteNumber("pid", 1);
            json.WriteNumber("tid", tid);
            json.WriteStartObject("args");
            json.WriteString("context", name);
            json.WriteString("work", escalation.Work);
            json.WriteNumber("fromLevel", escalation.FromLevel);
            json.WriteNumber("level", escalation.ToLevel);
            json.WriteString("cause", escalation.Cause ?? "raised before the recording");
            json.WriteString("by", escalation.By ?? string.Empty);
            json.WriteBoolean("ongoing", escalation.EndMs is null);
            json.WriteEndObject();
            json.WriteEndObject();
        }

        foreach ((string scheduler, string kind, string text, double atMs) in instants)
        {
            json.WriteStartObject();
            json.WriteString("name", kind);
            json.WriteString("ph", "i");
            json.WriteString("s", "g");
            json.WriteNumber("ts", Math.Round(atMs * 1000, 3));
            json.WriteNumber("pid", 1);
            json.WriteNumber("tid", 0);
            json.WriteStartObject("args");
            json.WriteString("context", scheduler);
            json.WriteString("message", text);
            json.WriteEndObject();
            json.WriteEndObject();
        }

        json.WriteEndArray();
        json.WriteEndObject();
        return slices.Count;
    }

    private static void WriteTrackName(Utf8JsonWriter json, int tid, string name)
    {
        json.WriteStartObject();
        json.WriteString("name", "thread_name");
        json.WriteString("ph", "M");
        json.WriteNumber("pid", 1);
        json.WriteNumber("tid", tid);
        json.WriteStartObject("args");
        json.WriteString("name", name);
        json.WriteEndObject();
        json.WriteEndObject();
    }

    private static EscalationTracker Tracker(Dictionary<int, EscalationTracker> trackers, int scheduler)
    {
        if (!trackers.TryGetValue(scheduler, out EscalationTracker? tracker))
        {
            tracker = new EscalationTracker();
            trackers.Add(scheduler, tracker);
        }

        return tracker;
    }
}
