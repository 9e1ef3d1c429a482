using System.Runtime.CompilerServices;

namespace PriorityAsync.Internal;

/// <summary>
/// The dispatch decision: which queued item runs next. Strict priority between levels, FIFO within a level:
/// always the oldest item of the highest non-empty level.
/// </summary>
/// <remarks>
/// Kept apart from the queues and the loop so that the other policies (<see cref="AgingDispatch"/>,
/// <see cref="WeightedSharesDispatch"/>) replace only this piece. A struct with no state: the loop instantiated with it is the loop
/// as it was before policies existed (see <see cref="IDispatchPolicy"/>). Consumer thread only.
/// Invariant (S1): the item run is the oldest item of the highest level that held work when the dispatch read the mask.
/// </remarks>
internal readonly struct StrictPriorityPolicy : IDispatchPolicy
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    bool IDispatchPolicy.TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level) =>
        TryDequeue(queues, allowed, out item, out level);

    /// <summary>[S-STRICT] among the levels whose bit is set in <paramref name="allowed"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level)
    {
        ulong mask = queues.NonEmptyMask & allowed;
        while (mask != 0)
        {
            level = LevelQueues.HighestLevel(mask);
            if (queues.TryDequeue(level, out item))
            {
                return true;
            }

            // The bit was stale and TryDequeue cleared it: re-read the whole mask, since a producer may have filled a
            // higher level meanwhile. Terminates: each failed round clears the bit it tried.
            mask = queues.NonEmptyMask & allowed;
        }

        item = default;
        level = -1;
        return false;
    }

    public void OnDrainStart()
    {
    }

    public void OnItemEnd(int level)
    {
    }
}
