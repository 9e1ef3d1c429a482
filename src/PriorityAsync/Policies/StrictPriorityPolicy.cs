using System.Runtime.CompilerServices;

namespace PriorityAsync.Internal;

/// <summary>
/// The dispatch decision: which queued item runs next. Strict priority between levels, FIFO within a level:
/// always the oldest item of the highest non-empty level.
/// </summary>
/// <remarks>[S-STRICT]. A struct with no state, so a dispatch instantiated with it has no policy code at all (see
/// <see cref="IDispatchPolicy"/>). Consumer thread only.</remarks>
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

            // A stale bit, now cleared: re-read the whole mask, since a producer may have filled a higher level meanwhile ([S-STRICT]).
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
