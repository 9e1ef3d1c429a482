using System.Text.Json.Serialization;

namespace BrokerWorker.Report;

/// <summary>How a mode's run ended (see <see cref="Processes.Coordinator"/>).</summary>
[JsonConverter(typeof(JsonStringEnumConverter<RunEnd>))]
public enum RunEnd
{
    /// <summary>The broker completed every message.</summary>
    Completed,

    /// <summary>Nothing was completed or delivered for the stall time: a worker holds a message it never finishes (a zombie lease).</summary>
    NoProgress,

    /// <summary>Not done by the deadline: a mode that keeps losing its leases is redelivered for ever.</summary>
    Deadline,

    /// <summary>Every worker exited before the queue was done.</summary>
    WorkersExited,
}
