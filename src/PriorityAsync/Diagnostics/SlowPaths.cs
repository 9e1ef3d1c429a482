namespace PriorityAsync.Internal;

/// <summary>
/// The bits of a scheduler's <c>_slowPaths</c> ([O-SLOW]): what its dispatch (and Post) must do beyond running an item. Zero, the usual
/// case, keeps every per-item diagnostic off the hot path behind one field read per item.
/// </summary>
internal static class SlowPaths
{
    /// <summary>Nothing is listening: the fast path.</summary>
    public const int None = 0;

    /// <summary>The queue-wait histogram is enabled: Post stamps each item with its enqueue time.</summary>
    public const int WaitTime = 1;

    /// <summary>The run-time histogram is enabled: the dispatch reads the clock around each item.</summary>
    public const int RunTime = 2;

    /// <summary>The <c>PriorityAsync</c> EventSource is enabled: start/stop events around each item.</summary>
    public const int EventSource = 4;

    /// <summary>A <see cref="PriorityTraceRecorder"/> is recording: one slice per item.</summary>
    public const int Recorder = 8;

    /// <summary>The bits that need a clock reading at the start and end of each item.</summary>
    public const int Timed = WaitTime | RunTime | Recorder;
}
