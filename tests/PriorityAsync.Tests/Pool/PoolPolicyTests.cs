using System.Diagnostics;
using FsCheck;
using FsCheck.Fluent;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// The aging and weighted-shares policies across the pool's threads (A1-N and W1-N in
/// src/PriorityAsync/Policies/PriorityThreadPool.Policies.cs), as properties over random thread counts, with no timing: the policies
/// read a test clock (<see cref="PriorityThreadPoolOptions.PolicyClock"/>) that only the test moves, and what happened before what is
/// stated on one counter, as in <see cref="PoolModelTests"/>.
/// </summary>
public sealed class PoolPolicyTests
{
    // ---- Aging: the next dequeue after the deadline ------------------------------------------------------------------------

    /// <summary>
    /// Top-level chains that keep the top level from ever emptying (one more chain than threads: a dequeuing thread runs nothing, so at
    /// least two chains have their next item queued), and a chain of lowest-level items. The aging bound of the lowest level is an hour,
    /// the top level's a day, so nothing expires on its own; at a random dequeue the test shifts the policy's clock two hours ahead,
    /// under the dispatch lock (in the DequeueObserver), so every later dequeue sees every lowest-level item expired and no top item.
    /// A1-N says: before the shift no lowest-level item is taken (strict); after it, a lowest-level item queued before a dequeue started
    /// is taken by that dequeue, on whichever thread. "Queued before the dequeue started": its Post returned before the dequeuing
    /// thread ended its previous item (a thread ends its item before it dequeues the next), both stamped on one counter.
    /// The top level stays non-empty until the lowest level has run <see cref="LowTarget"/> items after the shift (not for a fixed
    /// number of top items: a thread the OS parks between two items of the low chain must not let the top chains run out first), and
    /// the top chains start only once the first lowest-level item is queued (a test thread descheduled before its first Post would
    /// let every top item run before it).
    /// </summary>
    [Fact]
    public void Aging_TopLevelNeverEmpty_AnExpiredLowItemIsTakenByTheNextDequeueOnAnyThread()
    {
        Gen<(int Threads, int ShiftAt)> gen =
            from threads in Gen.Choose(1, 4)
            from shiftAt in Gen.Choose(0, 60)
            select (threads, shiftAt);
        Check.One(Config.QuickThrowOnFailure.WithMaxTest(25), Prop.ForAll(Arb.From(gen), c =>
        {
            AgingRun run = RunStarvation(c.Threads, c.ShiftAt, aging: true);
            run.LowBeforeShift.Should().Be(0, "before the deadline the policy is strict, and the top level never empties");
            run.Violations.Should().BeEmpty($"{c.Threads} threads, shift at dequeue {c.ShiftAt}");
            run.LowAfterShift.Should().BeGreaterThanOrEqualTo(LowTarget, "once expired, the lowest level runs under a top level that never empties");
        }));
    }

    /// <summary>The contrast, and proof that the check above can fail: the same load under strict priority leaves the expired lowest
    /// item queued behind the top level at dequeue after dequeue.</summary>
    [Fact]
    public void Strict_SameLoad_TheLowItemWaitsForTheTopLevelToEmpty()
    {
        AgingRun run = RunStarvation(threads: 2, shiftAt: 10, aging: false);
        run.LowBeforeShift.Should().Be(0);
        run.Violations.Should().NotBeEmpty();
    }

    /// <summary>How many lowest-level items must run after the shift before the top chains stop.</summary>
    private const int LowTarget = 40;

    private sealed record AgingRun(int LowBeforeShift, int LowAfterShift, IReadOnlyList<string> Violations);

    private static AgingRun RunStarvation(int threads, int shiftAt, bool aging)
    {
        // Under strict priority the lowest level never runs while the top chains go on: they stop after TopItemsWithoutAging.
        const int TopItemsWithoutAging = 2_000;
        const int MaxLow = 4_000;
        var clock = new ShiftedStopwatch();
        long counter = 0;
        var lastEnd = new ThreadLocal<long>(); // per thread: the counter as its previous item ended
        long[] lowDone = new long[MaxLow]; // per lowest-level item: the counter just after its Post returned (0: not yet)
        int lowDequeued = 0; // observer only (under the pool's lock), like the three below
        int dequeues = 0;
        int lowBeforeShift = 0;
        int lowAfterShift = 0;
        var violations = new List<string>();
        int topRuns = 0;
        bool stop = false;
        var topDone = new CountdownEvent(threads + 1);
        var lowStopped = new ManualResetEventSlim();
        var firstLowQueued = new ManualResetEventSlim();
        bool abandoned = false; // a failed wait below stops the chains, so that the pool's Dispose does not wait for them forever

        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            ThreadCount = threads,
            Levels = 3,
            Policy = aging ? PriorityPolicy.Aging(TimeSpan.FromHours(1), TimeSpan.FromDays(1), TimeSpan.FromDays(1)) : PriorityPolicy.Strict,
            PolicyClock = clock,
            Name = "aging-n",
        });
        using var disposePool = pool.BoundedDisposal();
        var low = pool.GetSynchronizationContext(0);
        var top = pool.GetSynchronizationContext(2);
        object topMarker = new();

        pool.DequeueObserver = (level, state) =>
        {
            int number = dequeues++;
            if (state is int index)
            {
                lowDequeued = index + 1;
                (number <= shiftAt ? ref lowBeforeShift : ref lowAfterShift)++;
            }
            else if (number > shiftAt && lowDequeued < MaxLow)
            {
                long queuedAt = Volatile.Read(ref lowDone[lowDequeued]);
                if (queuedAt != 0 && queuedAt < lastEnd.Value)
                {
                    violations.Add($"dequeue {number}: a top item, while lowest item {lowDequeued} (queued at {queuedAt}) had expired; this thread's previous item ended at {lastEnd.Value}");
                }
            }

            if (number == shiftAt)
            {
                clock.Shift(TimeSpan.FromHours(2)); // under the lock: every later dequeue reads the shifted clock
            }
        };

        SendOrPostCallback? topItem = null;
        topItem = _ =>
        {
            firstLowQueued.WaitOrFail("the first lowest-level item");
            bool goOn = !Volatile.Read(ref abandoned) && (aging
                ? Volatile.Read(ref lowAfterShift) < LowTarget
                : Interlocked.Increment(ref topRuns) < TopItemsWithoutAging);
            if (goOn)
            {
                top.Post(topItem!, topMarker);
            }
            else
            {
                Volatile.Write(ref stop, true);
                topDone.Signal();
            }

            lastEnd.Value = Interlocked.Increment(ref counter);
        };
        SendOrPostCallback? lowItem = null;
        lowItem = state =>
        {
            int next = (int)state! + 1;
            if (!Volatile.Read(ref stop) && next < MaxLow)
            {
                PostLow(next);
            }
            else
            {
                lowStopped.Set();
            }

            lastEnd.Value = Interlocked.Increment(ref counter);
        };

        for (int chain = 0; chain < threads + 1; chain++)
        {
            top.Post(topItem, topMarker);
        }

        PostLow(0);
        firstLowQueued.Set();
        try
        {
            topDone.WaitOrFail("the top-level chains");
            lowStopped.WaitOrFail("the lowest-level chain");
        }
        finally
        {
            Volatile.Write(ref abandoned, true);
        }

        pool.Complete();
        pool.Completion.Wait(TestTimeout.Unexpected).Should().BeTrue("the pool ends once the chains have");
        return new AgingRun(lowBeforeShift, lowAfterShift, violations);

        void PostLow(int index)
        {
            low.Post(lowItem!, index);
            Volatile.Write(ref lowDone[index], Interlocked.Increment(ref counter));
        }
    }

    /// <summary>Stopwatch's timestamps, which the pool stamps enqueued items with, shifted ahead by the test.</summary>
    private sealed class ShiftedStopwatch : TimeProvider
    {
        private long _shift;

        public override long TimestampFrequency => Stopwatch.Frequency;

        public override long GetTimestamp() => Stopwatch.GetTimestamp() + Volatile.Read(ref _shift);

        public void Shift(TimeSpan by) => Interlocked.Add(ref _shift, (long)(by.TotalSeconds * Stopwatch.Frequency));
    }

    // ---- Weighted shares: run time summed over threads ------------------------------------------------------------------

    /// <summary>
    /// Three levels kept backlogged (one more chain per level than threads), random shares and random run times up to D, 1 to 4
    /// threads. The policy's clock is one per thread and only the items move it (each by its run time), so each item is charged
    /// exactly its run time. At every item, each level's run time summed over the threads is within W1-N's bound of its shares' part
    /// of the total: [-(L N + N - 1) D s/S, (2N - 1) D], L = 3 levels, N threads. The total grows with every item while the bound does
    /// not, so the split converges to the shares.
    /// </summary>
    [Fact]
    public void WeightedShares_ThreeLevelsBacklogged_RunTimeSummedOverThreadsTracksShares()
    {
        Gen<(int Threads, int[] Shares, int[] Durations)> gen =
            from threads in Gen.Choose(1, 4)
            from shares in Gen.ArrayOf(Gen.Choose(1, 8), 3)
            from durations in Gen.ArrayOf(Gen.Choose(1, 40), 97)
            select (threads, shares, durations);
        Check.One(Config.QuickThrowOnFailure.WithMaxTest(30), Prop.ForAll(Arb.From(gen), c =>
        {
            (double[] worstAbove, double[] worstBelow, long total) = RunBacklogged(c.Threads, c.Shares, c.Durations, items: 3_000);
            int d = c.Durations.Max();
            int n = c.Threads;
            double totalShares = c.Shares.Sum();
            string plan = $"{n} threads, shares {string.Join(":", c.Shares)}, longest item {d}, total {total}";
            for (int level = 0; level < 3; level++)
            {
                worstAbove[level].Should().BeLessThanOrEqualTo((2 * n - 1) * d, $"level {level} above its share; {plan}");
                worstBelow[level].Should().BeGreaterThanOrEqualTo(-(3 * n + n - 1) * d * c.Shares[level] / totalShares, $"level {level} below its share; {plan}");
            }
        }));
    }

    private static (double[] WorstAbove, double[] WorstBelow, long Total) RunBacklogged(int threads, int[] shares, int[] durations, int items)
    {
        var clock = new ClockPerThread();
        long[] runTime = new long[3];
        double[] worstAbove = new double[3];
        double[] worstBelow = new double[3];
        double totalShares = shares.Sum();
        int ran = 0;
        int next = 0;
        object gate = new();
        var chainsEnded = new CountdownEvent(3 * (threads + 1));

        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            ThreadCount = threads,
            Levels = 3,
            Policy = PriorityPolicy.WeightedShares(shares),
            PolicyClock = clock,
            Name = "shares-n",
        });
        using var disposePool = pool.BoundedDisposal();

        // Hold every thread while the chains are queued, so that every level is backlogged from the first dispatch (a level that
        // turned on later would be lifted to the floor, W2, and start above its share). The hold items move no clock: charged 0.
        using (SchedulerHost.HoldEveryThread(pool, level: 0, "the hold"))
        {
            for (int level = 0; level < 3; level++)
            {
                SynchronizationContext sc = pool.GetSynchronizationContext(level);
                int myLevel = level;
                SendOrPostCallback? item = null;
                item = _ =>
                {
                    int duration;
                    bool more;
                    lock (gate)
                    {
                        // W1-N holds while every level stays backlogged: until the first chain ends (ran reaches items).
                        if (ran < items)
                        {
                            long total = runTime.Sum();
                            for (int l = 0; l < 3; l++)
                            {
                                double error = runTime[l] - (total * shares[l] / totalShares);
                                worstAbove[l] = Math.Max(worstAbove[l], error);
                                worstBelow[l] = Math.Min(worstBelow[l], error);
                            }
                        }

                        duration = durations[next++ % durations.Length];
                        runTime[myLevel] += duration;
                        more = ++ran < items;
                    }

                    clock.Advance(duration); // this item's run time, on this thread's clock: what the pool charges to its level
                    if (more)
                    {
                        sc.Post(item!, null);
                    }
                    else
                    {
                        chainsEnded.Signal();
                    }
                };
                for (int chain = 0; chain < threads + 1; chain++)
                {
                    sc.Post(item, null);
                }
            }
        }

        chainsEnded.WaitOrFail("the chains");
        pool.Complete();
        pool.Completion.Wait(TestTimeout.Unexpected).Should().BeTrue("the pool ends once the chains have");
        return (worstAbove, worstBelow, runTime.Sum());
    }

    /// <summary>A clock per thread, moved only by <see cref="Advance"/> on that thread: the weighted-shares policy reads it on the
    /// thread that runs the item (at the dequeue and at the item's end), so the charge is exactly what the item advanced. 1 tick = 1 µs.</summary>
    private sealed class ClockPerThread : TimeProvider
    {
        private readonly ThreadLocal<long> _now = new(() => 1_000_000);

        public override long TimestampFrequency => 1_000_000;

        public override long GetTimestamp() => _now.Value;

        public void Advance(long ticks) => _now.Value += ticks;
    }
}
