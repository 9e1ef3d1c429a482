using System.Collections.Generic;

namespace PriorityAsync;

/// <summary>A moment's view of a <see cref="PriorityContext"/> for diagnostics. The counts are read without stopping the loop, so they are approximate while it runs.</summary>
public sealed class PriorityContextSnapshot
{
    internal PriorityContextSnapshot(PriorityContextState state, int[] pending, long[] run, long dropped, int outstandingOperations)
    {
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
