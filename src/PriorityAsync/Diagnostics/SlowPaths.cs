namespace PriorityAsync.Internal;

/// <summary>
/// The bits of a scheduler's <c>_slowPaths</c> ([O-SLOW]): what its dispatch (and Post) must do beyond running an item. Zero, the usual
/// case, keeps every per-item diagnostic off the hot path behind one field read per item.
/// </summary>
internal static class SlowPaths
{
    /// <summary>Nothing is listening: the fast path.</summary>
    public const int None = 0;

    /// <summary>Post stamps each item with its enqueue time: the queue-wait histogram is enabled, or the inspector observes every item
    /// of this scheduler (<see cref="InspectAll"/>).</summary>
    public const int WaitTime = 1;

    /// <summary>The run-time histogram is enabled: the dispatch reads the clock around each item.</summary>
    public const int RunTime = 2;

    /// <summary>The <c>PriorityAsync</c> EventSource's <c>Items</c> keyword is enabled: start/stop events around each item.</summary>
    public const int EventSource = 4;

    /// <summary>A <see cref="PriorityTraceRecorder"/> is recording: one slice per item.</summary>
    public const int Recorder = 8;

    /// <summary>The queue-wait histogram is enabled: each stamped item's wait is recorded as it starts.</summary>
    public const int WaitHistogram = 16;

    /// <summary>An inspector session observes every item of this scheduler (its item rate is low: docs/inspector.md, "Sampling").</summary>
    public const int InspectAll = 32;

    /// <summary>An inspector session observes the next item only: one-shot, cleared by the thread that takes it (the sampler arms it
    /// once per period while the scheduler's item rate is high).</summary>
    public const int InspectOne = 64;

    /// <summary>The bits that need a clock reading at the start and end of each item.</summary>
    public const int Timed = WaitHistogram | RunTime | Recorder | InspectAll | InspectOne;

    /// <summary>The inspector's bits.</summary>
    public const int Inspect = InspectAll | InspectOne;
}
