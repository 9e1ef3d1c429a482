using System;
using System.IO;
using Microsoft.Diagnostics.Tracing;

namespace PriorityAsync.Inspector;

/// <summary>Reads an EventPipe stream (live, or a recording) and hands every <c>PriorityAsync</c> event to the model.</summary>
internal static class EventStreamReader
{
    public const string ProviderName = "PriorityAsync";

    /// <summary>Reads until the stream ends. Returns the number of events the runtime reported lost.</summary>
    public static long Read(Stream stream, InspectorModel model, Action<TraceEvent>? each = null)
    {
        using var source = new EventPipeEventSource(stream);
        source.Dynamic.All += data =>
        {
            if (data.ProviderName == ProviderName)
            {
                model.OnEvent(data.EventName, data.TimeStampRelativeMSec, new TracePayload(data));
                each?.Invoke(data);
            }
        };

        source.Process();
        model.AddLostEvents(source.EventsLost);
        return source.EventsLost;
    }
}
