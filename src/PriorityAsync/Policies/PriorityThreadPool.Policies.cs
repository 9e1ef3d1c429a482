using System;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The policies on the pool's N threads: the single loop's invariants (S1 in Policies/StrictPriorityPolicy.cs, A1 in
// Policies/AgingDispatch.cs, W1 and W2 in Policies/WeightedSharesDispatch.cs), restated for N threads. The dequeue itself is D-N in
// ThreadPool/PriorityThreadPool.Engine.cs: strict without caps dequeues lock-free; aging, weighted shares and any cap dequeue under the
// dispatch lock, one decision at a time, with the same policy code as the loop's, among the levels below their cap.
//
// S1-N. At every dequeue, on any thread, the item taken is the oldest item of the highest level that holds work and is below its cap.
// So a level that holds queued work at every dequeue starves every level below it, whatever the thread count (a cap on it leaves the
// other ThreadCount - cap threads to the levels below). Test: PoolOrderingStressTests, PoolModelTests.
//
// A1-N. A1 holds at every dequeue, on any thread, among the levels below their cap, with one clock reading per dequeue. Bound: once an
// item is the head of its level and its deadline has passed, the next dequeue on any thread takes it, unless that dequeue takes an
// expired head with an earlier deadline, or the item's level is at its cap. While runnable work waits no thread stays idle (P2), so
// the next dequeue comes as soon as the first of the running items ends: under a top level that never empties, the lowest level
// still waits at most its bound plus one item's run time, on any number of threads, provided its items do not queue up behind each
// other faster than they run. Enqueue stamps items with Stopwatch while the policy is in force; the policy reads the same clock.
// Test: PoolPolicyTests.Aging_* (the next dequeue after the deadline, on a clock the test shifts under the dispatch lock).
//
// W1-N. Run time is charged per thread: a thread notes the clock when it dequeues an item and charges the time to the item's end to
// the item's level when it next takes the dispatch lock (EndItemLocked, before its next dequeue), so a level's virtual run time grows
// by its items' run time summed over the threads, divided by its shares. W1 and W2 hold at every dequeue among the levels below their
// cap. What widens is the bound: an item is charged only when it ends, so a level may be chosen again while up to ThreadCount of its
// items run uncharged. While a set of levels stays backlogged (each holds queued work at every dequeue), with D the longest item, L
// the number of levels and s/S a level's part of the shares, each level's run time summed over the threads stays within
// [-(L N + N - 1) D s/S, (2N - 1) D] of s/S of the total (N = 1: [-L D s/S, D], the loop's W1). Proof sketch: no backlogged level is
// below the floor F (W2), and none is above F + N D / s (the items it had in flight when it was last chosen), so its charged run time
// is s F to s F + N D; its uncharged run time and the others' (at most N - 1 items besides the caller's) make up the rest. A level
// gets its share only while backlogged: one that runs one item at a time (an await chain) uses at most one thread, and a cap bounds it.
// Test: PoolPolicyTests.WeightedShares_* (run time on a clock per thread, which only the items move).
public sealed partial class PriorityThreadPool
{
    /// <summary>For tests: the aging state, or null.</summary>
    internal AgingDispatch? AgingDispatch => _aging;

    /// <summary>For tests: the weighted-shares state, or null.</summary>
    internal WeightedSharesDispatch? SharesDispatch => _shares;

    /// <summary>For tests (<see cref="PriorityThreadPoolOptions.PolicyClock"/>): rebuilds the policy's state on <paramref name="clock"/>.
    /// Called once by the constructor, before any thread starts: the dispatch path reads whatever clock its policy was built with, so a
    /// test clock costs the dispatch path nothing.</summary>
    private void UsePolicyClock(TimeProvider? clock)
    {
        if (clock is null)
        {
            return;
        }

        if (_aging is not null)
        {
            _aging = new AgingDispatch((AgingPriorityPolicy)Policy, clock);
        }

        if (_shares is not null)
        {
            _shares = new WeightedSharesDispatch((WeightedSharesPriorityPolicy)Policy, clock);
        }
    }
}
