using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;

namespace PriorityAsync.Inspector;

/// <summary>
/// Writes a recording's observed items in the Chrome trace event format, as <c>PriorityTraceRecorder</c> does in process (opens in
/// Perfetto and <c>chrome://tracing</c>): one track per loop and level, one per pool thread; faults, drops, exceptions and stalls as
/// instant events. Only observed items are there: every item while a scheduler's rate was low, one per sample period while high.
/// </summary>
internal static class ChromeTrace
{
    public static int Write(string recordingPath, Stream destination)
    {
        var schedulers = new Dictionary<int, (string Name, string Kind)>();
        var slices = new List<(int Scheduler, int Thread, int Level, string Method, double EndMs, double RunMs, bool Sampled)>();
        var instants = new List<(string Scheduler, string Kind, string Text, double AtMs)>();
        var model = new InspectorModel();
        using (FileStream file = File.OpenRead(recordingPath))
        {
            EventStreamReader.Read(file, model, data =>
            {
                var payload = new TracePayload(data);
                switch (data.EventName)
                {
                    case "SchedulerInfo":
                        schedulers[payload.Int("schedulerId")] = (payload.String("scheduler"), payload.String("kind"));
                        break;
                    case "ItemRun":
                        slices.Add((payload.Int("schedulerId"), payload.Int("thread"), payload.Int("level"), payload.String("method"),
                            data.TimeStampRelativeMSec, payload.Double("runMilliseconds"), payload.Int("sampled") != 0));
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
                json.WriteStartObject();
                json.WriteString("name", "thread_name");
                json.WriteString("ph", "M");
                json.WriteNumber("pid", 1);
                json.WriteNumber("tid", tid);
                json.WriteStartObject("args");
                json.WriteString("name", pool ? $"{name} #{thread}" : $"{name} / level {level}");
                json.WriteEndObject();
                json.WriteEndObject();
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
}
