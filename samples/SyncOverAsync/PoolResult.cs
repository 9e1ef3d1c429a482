using System;

namespace SyncOverAsync;

/// <summary>What the thread-pool experiment measured for one style.</summary>
internal sealed record PoolResult(
    Style Style,
    TimeSpan Duration,
    int Started,
    int ServedInWindow,
    int PeakThreads,
    long PeakQueueLength,
    bool Drained)
{
    public double ServedPerSecond => ServedInWindow / Duration.TotalSeconds;
}
