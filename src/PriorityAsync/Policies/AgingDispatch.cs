using System;
using System.Diagnostics;

namespace PriorityAsync.Internal;

/// <summary>
/// The aging policy (<see cref="PriorityPolicy.Aging(TimeSpan[])"/>): strict priority, except that an item whose wait has passed its
/// level's bound runs first. Consumer thread only.
/// </summary>
/// <remarks>[A-AGING]: the expired head with the earliest deadline, else strict. Items are stamped on the scheduler's clock while the
/// policy is in force, and read here on the same clock; an unstamped item never expires. With one level holding work it costs the
/// strict dispatch; with more, one clock reading and one peek per non-empty level ([Q-PEEK]).</remarks>
internal sealed class AgingDispatch
{
    private readonly long[] _bounds; // in clock ticks, per level
    private readonly TimeProvider? _clock;

    public AgingDispatch(AgingPriorityPolicy policy, TimeProvider? clock)
    {
        _clock = clock;
        long frequency = clock?.TimestampFrequency ?? Stopwatch.Frequency;
        _bounds = new long[policy.MaxWaitPerLevel.Count];
        for (int level = 0; level < _bounds.Length; level++)
        {
            // At least one tick: a bound that rounds to 0 would make every stamped item expired at once.
            _bounds[level] = Math.Max(1, (long)Math.Round(policy.MaxWaitPerLevel[level].TotalSeconds * frequency));
        }
    }

    /// <summary>The bound of <paramref name="level"/> in clock ticks (for tests).</summary>
    internal long BoundTicks(int level) => _bounds[level];

    /// <summary>[A-AGING] among the levels whose bit is set in <paramref name="allowed"/> (the pool's levels below their concurrency cap).</summary>
    public bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level)
    {
        ulong mask = queues.NonEmptyMask & allowed;
        if ((mask & (mask - 1)) != 0 && TryDequeueExpired(queues, mask, out item, out level))
        {
            return true;
        }

        // One level holds work, or no head is expired: strict ([S-STRICT]), through the peek slots.
        mask = queues.NonEmptyMask & allowed;
        while (mask != 0)
        {
            level = LevelQueues.HighestLevel(mask);
            if (queues.TryDequeuePeekable(level, out item))
            {
                return true;
            }

            mask = queues.NonEmptyMask & allowed; // a stale bit, now cleared (as in StrictPriorityPolicy)
        }

        item = default;
        level = -1;
        return false;
    }

    private bool TryDequeueExpired(LevelQueues queues, ulong mask, out WorkItem item, out int level)
    {
        long now = _clock?.GetTimestamp() ?? Stopwatch.GetTimestamp();
        int best = -1;
        long bestDeadline = long.MaxValue;

        // From the highest level down, a strictly earlier deadline wins: ties go to the higher level.
        while (mask != 0)
        {
            int candidate = LevelQueues.HighestLevel(mask);
            mask &= ~(1UL << candidate);
            if (queues.TryPeek(candidate, out WorkItem head) && head.EnqueuedAt != 0)
            {
                long deadline = head.EnqueuedAt + _bounds[candidate];
                if (deadline < now && deadline < bestDeadline)
                {
                    best = candidate;
                    bestDeadline = deadline;
                }
            }
        }

        // The peeked head is still there: only this thread dequeues.
        if (best >= 0 && queues.TryDequeuePeekable(best, out item))
        {
            level = best;
            return true;
        }

        item = default;
        level = -1;
        return false;
    }

    /// <summary>The dispatch's view of this policy (see <see cref="IDispatchPolicy"/>).</summary>
    public readonly struct View(AgingDispatch policy) : IDispatchPolicy
    {
        public bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level) => policy.TryDequeue(queues, allowed, out item, out level);

        public void OnDrainStart()
        {
        }

        public void OnItemEnd(int level)
        {
        }
    }
}
