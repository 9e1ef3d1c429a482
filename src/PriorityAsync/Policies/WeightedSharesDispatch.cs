using System;
using System.Diagnostics;
using System.Numerics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The weighted-shares policy (<see cref="PriorityPolicy.WeightedShares(int[])"/>): a virtual run time per level, as in a fair-share
/// scheduler (Linux's CFS, Seastar's scheduling groups). Consumer thread only, except <see cref="SetShares"/> and <see cref="GetShares"/>.
/// </summary>
/// <remarks>
/// <para>Charging: the loop reads the clock when a drain starts and after every item; the time since the previous reading is the item's
/// run time (the dispatch and any due-timer bookkeeping before it included), and its level's virtual run time grows by run time / shares.
/// An item that throws is not charged (the handler's time is nobody's).</para>
/// <para>Invariant (W1): at every dispatch the item run is the head of the level with the least virtual run time among the levels holding
/// work, ties to the higher level. So while a set of levels stays backlogged, their virtual run times advance together, and each level's
/// run time over the interval is its shares' part of the total to within one item's run time per level.</para>
/// <para>Invariant (W2): no backlogged level has a virtual run time below <c>_floor</c>, the largest virtual run time any dispatch has
/// chosen (never decreasing). A level whose bit turns on (it was idle, or new) is lifted to the floor first, so it competes from where
/// the others are now instead of spending credit banked while idle; a level that kept its bit never fell below the floor, because
/// every dispatch chooses the least virtual run time among the set bits. A stale bit (empty queue) is harmless: if its level is chosen,
/// the dequeue comes back empty and clears it, and the choice is made again among the rest.</para>
/// <para>Shares may change at any time from any thread: each is one int, read once per charge, so a change applies to the run time
/// charged from then on; virtual run time already accrued stays.</para>
/// </remarks>
internal sealed class WeightedSharesDispatch
{
    private readonly int[] _shares;
    private readonly double[] _virtualRunTime; // clock ticks / shares; loop only
    private readonly TimeProvider? _clock;
    private ulong _activeMask; // the bits seen at the last dispatch; loop only
    private double _floor; // W2; loop only
    private long _lastReading; // the clock at the start of the running item; loop only

    public WeightedSharesDispatch(WeightedSharesPriorityPolicy policy, TimeProvider? clock)
    {
        _clock = clock;
        _shares = new int[policy.SharesPerLevel.Count];
        _virtualRunTime = new double[_shares.Length];
        for (int level = 0; level < _shares.Length; level++)
        {
            _shares[level] = policy.SharesPerLevel[level];
        }
    }

    public int GetShares(int level) => Volatile.Read(ref _shares[level]);

    public void SetShares(int level, int shares) => Volatile.Write(ref _shares[level], shares);

    /// <summary>For tests: the virtual run time of <paramref name="level"/>. Loop thread (or while the loop runs an item).</summary>
    internal double VirtualRunTime(int level) => _virtualRunTime[level];

    /// <summary>W1 among the levels whose bit is set in <paramref name="allowed"/> (the pool's levels below their concurrency cap). A
    /// level held back by its cap stays backlogged: W2 sees it as on (it is not lifted to the floor when its cap frees).</summary>
    public bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level)
    {
        ulong present = queues.NonEmptyMask;
        ulong mask = present & allowed;
        while (mask != 0)
        {
            // W2: lift levels that just turned on to the floor.
            for (ulong fresh = present & ~_activeMask; fresh != 0; fresh &= fresh - 1)
            {
                int turnedOn = BitOperations.TrailingZeroCount(fresh);
                if (_virtualRunTime[turnedOn] < _floor)
                {
                    _virtualRunTime[turnedOn] = _floor;
                }
            }

            _activeMask = present;

            // W1: the least virtual run time; from the highest level down, only a strictly smaller one wins (ties to the higher level).
            int best = -1;
            double least = double.PositiveInfinity;
            for (ulong rest = mask; rest != 0;)
            {
                int candidate = LevelQueues.HighestLevel(rest);
                rest &= ~(1UL << candidate);
                if (_virtualRunTime[candidate] < least)
                {
                    best = candidate;
                    least = _virtualRunTime[candidate];
                }
            }

            if (queues.TryDequeue(best, out item))
            {
                level = best;
                if (least > _floor)
                {
                    _floor = least;
                }

                return true;
            }

            // A stale bit, now cleared: choose again among the rest (a producer may also have filled a level meanwhile).
            present = queues.NonEmptyMask;
            mask = present & allowed;
            _activeMask &= ~(1UL << best);
        }

        _activeMask = present; // 0 without caps; with caps, the levels held back stay on (W2)
        item = default;
        level = -1;
        return false;
    }

    public void OnDrainStart() => _lastReading = Now();

    public void OnItemEnd(int level)
    {
        long now = Now();
        _virtualRunTime[level] += (now - _lastReading) / (double)Volatile.Read(ref _shares[level]);
        _lastReading = now;
    }

    /// <summary>The pool: charges <paramref name="runTicks"/> of one thread's item to <paramref name="level"/> (under the pool's
    /// dispatch lock). Shares are measured in run time summed over the threads.</summary>
    public void Charge(int level, long runTicks) =>
        _virtualRunTime[level] += runTicks / (double)Volatile.Read(ref _shares[level]);

    /// <summary>The clock this policy charges with.</summary>
    public long Now() => _clock?.GetTimestamp() ?? Stopwatch.GetTimestamp();

    /// <summary>The dispatch's view of this policy (see <see cref="IDispatchPolicy"/>).</summary>
    public readonly struct View(WeightedSharesDispatch policy) : IDispatchPolicy
    {
        public bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level) => policy.TryDequeue(queues, allowed, out item, out level);

        public void OnDrainStart() => policy.OnDrainStart();

        public void OnItemEnd(int level) => policy.OnItemEnd(level);
    }
}
