using System;

namespace PriorityAsync;

/// <summary>Describes a stall: a thread of a priority scheduler (the loop of a <see cref="PriorityContext"/>, or one thread of a
/// <see cref="PriorityThreadPool"/>) has not started an item for at least <see cref="PrioritySchedulerOptions.StallTimeout"/>
/// although work was waiting.</summary>
/// <remarks>
/// <para>A stall means the item the thread is running has not returned: it blocks (for example a sync-over-async <c>task.Wait()</c>
/// or <c>.Result</c> for work queued to the same scheduler, which never completes) or it simply runs for a long time.</para>
/// <para>The watchdog samples the thread's dispatch counter and the queues every quarter of the stall timeout; it never touches the
/// hot path. See docs/reliability.md for exactly what is measured.</para>
/// </remarks>
public sealed class StallDetectedEventArgs : EventArgs
{
    internal StallDetectedEventArgs(int level, TimeSpan waitingFor, int pendingCount, TimeSpan stallTimeout)
    {
        Level = level;
        WaitingFor = waitingFor;
        PendingCount = pendingCount;
        StallTimeout = stallTimeout;
    }

    /// <summary>Gets the most urgent level with waiting work: the level the thread would run next if it were free.</summary>
    public int Level { get; }

    /// <summary>
    /// Gets how long work has been waiting while the thread started nothing: the time since the first check that found work waiting and
    /// no item started since the check before. Every item that was waiting at that check is still waiting (nothing ran since), so the
    /// oldest waiting item is at least this old. It is at least <see cref="StallTimeout"/>.
    /// </summary>
    public TimeSpan WaitingFor { get; }

    /// <summary>Gets the number of items waiting, over all levels, when the stall was reported (a moment's count).</summary>
    public int PendingCount { get; }

    /// <summary>Gets the configured <see cref="PrioritySchedulerOptions.StallTimeout"/>.</summary>
    public TimeSpan StallTimeout { get; }
}
