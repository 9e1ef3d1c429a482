using Microsoft.Extensions.Logging;

namespace PriorityAsync.Hosting;

/// <summary>The event ids of what a <see cref="PriorityBackgroundService"/> logs, under the category <c>PriorityAsync.Hosting.PriorityBackgroundService</c>.</summary>
/// <remarks>The ids are 1001 to 1006, apart from the host's own (which start at 1), so that a filter on the id alone finds them.</remarks>
public static class PriorityWorkerEventIds
{
    /// <summary>An exception escaped a callback on the worker's loop (typically an <c>async void</c> method); the loop stops and the
    /// host's <c>BackgroundServiceExceptionBehavior</c> applies. Level: Error.</summary>
    public static readonly EventId UnhandledException = new(1001, nameof(UnhandledException));

    /// <summary>Callbacks were dropped: posted after the loop finished, or still queued when it faulted. Carries the count per level;
    /// rate-limited by <see cref="PriorityWorkerOptions.WorkDroppedLogInterval"/>. Level: Warning.</summary>
    public static readonly EventId WorkDropped = new(1002, nameof(WorkDropped));

    /// <summary>The loop started nothing for at least <see cref="PrioritySchedulerOptions.StallTimeout"/> while work waited. Carries the
    /// most urgent waiting level and how long work has waited. Level: Warning.</summary>
    public static readonly EventId StallDetected = new(1003, nameof(StallDetected));

    /// <summary>The host's shutdown timeout ended before <c>ExecuteAsync</c> and the loop finished. Carries the work still waiting per
    /// level. Level: Warning.</summary>
    public static readonly EventId StopTimedOut = new(1004, nameof(StopTimedOut));

    /// <summary>The worker's loop runs and <c>ExecuteAsync</c> was started on it. Level: Debug.</summary>
    public static readonly EventId Started = new(1005, nameof(Started));

    /// <summary>The worker stopped: <c>ExecuteAsync</c> returned and the loop finished. Level: Debug.</summary>
    public static readonly EventId Stopped = new(1006, nameof(Stopped));
}
