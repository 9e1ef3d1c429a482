using System.Collections.Generic;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>A moment's view of a <see cref="PriorityContext"/> for diagnostics. The counts are read without stopping the loop, so they are approximate while it runs.</summary>
public sealed class PriorityContextSnapshot
{
    // Both schedulers' GetSnapshot: the queue counts and the run counters read level by level, each without a lock (Volatile), so a
    // snapshot of a running scheduler is a set of recent values, not one instant.
    internal PriorityContextSnapshot(PriorityContextState state, LevelQueues queues, long[] runPerLevel, long dropped, int outstandingOperations)
    {
        int[] pending = new int[runPerLevel.Length];
        long[] run = new long[runPerLevel.Length];
        for (int level = 0; level < run.Length; level++)
        {
            pending[level] = queues.Count(level);
            run[level] = Volatile.Read(ref runPerLevel[level]);
        }

        State = state;
        PendingPerLevel = pending;
        RunPerLevel = run;
        DroppedCount = dropped;
        OutstandingOperations = outstandingOperations;
    }

    /// <summary>Gets the state of the context.</summary>
    public PriorityContextState State { get; }

    /// <summary>Gets the number of items waiting at each level; index L is level L.</summary>
    public IReadOnlyList<int> PendingPerLevel { get; }

    /// <summary>Gets the number of items the loop has started at each level; index L is level L.</summary>
    public IReadOnlyList<long> RunPerLevel { get; }

    /// <summary>Gets the number of callbacks that were dropped (see <see cref="PriorityContext.WorkDropped"/>).</summary>
    public long DroppedCount { get; }

    /// <summary>Gets the number of operations (the entry point, <c>async void</c> methods, the owning thread) that keep the loop alive.</summary>
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
