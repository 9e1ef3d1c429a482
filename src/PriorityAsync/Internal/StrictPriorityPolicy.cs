namespace PriorityAsync.Internal;

/// <summary>
/// The dispatch decision: which queued item runs next. Strict priority between levels, FIFO within a level:
/// always the oldest item of the highest non-empty level.
/// </summary>
/// <remarks>
/// Kept apart from the queues and the loop so that later policies (aging, weighted shares, deadlines) replace only
/// this piece. Consumer thread only.
/// </remarks>
internal sealed class StrictPriorityPolicy
{
    public bool TryDequeue(LevelQueues queues, out WorkItem item, out int level)
    {
        ulong mask = queues.NonEmptyMask;
        while (mask != 0)
        {
            level = LevelQueues.HighestLevel(mask);
            if (queues.TryDequeue(level, out item))
            {
                return true;
            }

            // The bit was stale and TryDequeue cleared it: re-read the whole mask, since a producer may have filled a
            // higher level meanwhile. Terminates: each failed round clears the bit it tried.
            mask = queues.NonEmptyMask;
        }

        item = default;
        level = -1;
        return false;
    }
}
