using System;
using System.Diagnostics;
using System.Numerics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The weighted-shares policy (<see cref="PriorityPolicy.WeightedShares(int[])"/>): a virtual run time per level, as in a fair-share
/// scheduler (Linux's CFS, Seastar's scheduling groups). Consumer thread only, except <see cref="SetShares"/> and <see cref="GetShares"/>.
/// </summary>
/// <remarks>[W-SHARES]: the level with the least virtual run time (run time / shares) runs next; [W-FLOOR]: a level that turns on
/// starts from the floor. The loop charges each item from clock readings around it; a pool thread charges its item when it next takes
/// the dispatch lock (<see cref="Charge"/>). Shares are one <c>int</c> each, read once per charge.</remarks>
internal sealed class WeightedSharesDispatch
{
    private readonly int[] _shares;
    private readonly double[] _virtualRunTime; // clock ticks / shares; consumer only
    private readonly TimeProvider? _clock;
    private ulong _activeMask; // the bits seen at the last dispatch; consumer only
    private double _floor; // [W-FLOOR]; consumer only
    private long _lastReading; // the clock at the start of the running item; the loop only

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

    /// <summary>For tests: the virtual run time of <paramref name="level"/>. Consumer thread (or while it runs an item).</summary>
    internal double VirtualRunTime(int level) => _virtualRunTime[level];

    /// <summary>[W-SHARES] among the levels whose bit is set in <paramref name="allowed"/> (the pool's levels below their concurrency
    /// cap). A level held back by its cap stays backlogged for [W-FLOOR] (it is not lifted to the floor when its cap frees).</summary>
    public bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level)
    {
        ulong present = queues.NonEmptyMask;
        ulong mask = present & allowed;
        while (mask != 0)
        {
            // [W-FLOOR]: lift levels that just turned on to the floor.
            for (ulong fresh = present & ~_activeMask; fresh != 0; fresh &= fresh - 1)
            {
                int turnedOn = BitOperations.TrailingZeroCount(fresh);
                if (_virtualRunTime[turnedOn] < _floor)
                {
                    _virtualRunTime[turnedOn] = _floor;
                }
            }

            _activeMask = present;

            // [W-SHARES]: the least virtual run time; from the highest level down, only a strictly smaller one wins (ties to the higher level).
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

        _activeMask = present; // 0 without caps; with caps, the levels held back stay on ([W-FLOOR])
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
    /// dispatch lock). Shares are measured in run time summed over the threads ([W-SHARES]).</summary>
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
