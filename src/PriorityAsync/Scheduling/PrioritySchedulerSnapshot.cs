using System.Collections.Generic;

namespace PriorityAsync;

/// <summary>A moment's view of a priority scheduler for diagnostics (<see cref="PriorityScheduler.GetSnapshot"/>). The counts are read
/// level by level without stopping the scheduler, so while it runs they are a set of recent values, not one instant.</summary>
public sealed class PrioritySchedulerSnapshot
{
    internal PrioritySchedulerSnapshot(PrioritySchedulerState state, int[] pendingPerLevel, long[] runPerLevel, long dropped, int outstandingOperations)
    {
        State = state;
        PendingPerLevel = pendingPerLevel;
        RunPerLevel = runPerLevel;
        DroppedCount = dropped;
        OutstandingOperations = outstandingOperations;
    }

    /// <summary>Gets the state of the scheduler.</summary>
    public PrioritySchedulerState State { get; }

    /// <summary>Gets the number of items waiting at each level; index L is level L.</summary>
    public IReadOnlyList<int> PendingPerLevel { get; }

    /// <summary>Gets the number of items started at each level (summed over a pool's threads); index L is level L.</summary>
    public IReadOnlyList<long> RunPerLevel { get; }

    /// <summary>Gets the number of callbacks and timers that were dropped (see <see cref="PriorityScheduler.WorkDropped"/>).</summary>
    public long DroppedCount { get; }

    /// <summary>Gets the number of operations (an entry point, <c>async void</c> methods, <c>InvokeAsync</c> work, children, the owning
    /// thread or pool) that keep the scheduler alive.</summary>
    public int OutstandingOperations { get; }

    /// <summary>Gets the total number of waiting items.</summary>
    public int TotalPending
    {
        get
        {
            int total = 0;
            foreach (int p in PendingPerLevel)
            {
                total += p;
            }

            return total;
        }
    }
}
