using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using FsCheck;
using FsCheck.Fluent;
using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// Model-based test of the pool (FsCheck): generated plans (1-4 threads, 1-4 levels, caps, a policy, 1-3 producers posting at random
/// levels, the pool optionally held while the first posts land, Complete at a random point that later posts race) run on a real pool,
/// and the run's record is checked against the rules that hold across threads:
/// <list type="number">
/// <item>Exactly once: every posted item runs once, or is dropped once and reported through WorkDropped, never both, never neither; an
/// item whose Post returned before Complete was called runs; the snapshot's DroppedCount is the number of drops.</item>
/// <item>Per producer FIFO of dequeue within a level: the items one producer posted at one level are dequeued in its program order.</item>
/// <item>Strict priority at each dequeue (strict policy only): when item X of level L is dequeued, no item Y of a higher level whose Post
/// had returned before X's dequeue started is still queued, unless Y's level may have been at its cap.</item>
/// </list>
/// <para>How rule 3 is made exact, with no timing: one counter orders the test's events. Each item takes a number just after its
/// Post returns (Done); the pool's DequeueStarting hook takes one as each dequeue begins, in the critical section in which the
/// DequeueObserver then sees the item that dequeue took: <c>Bound(X)</c>, the moment X's dequeue began. A Y with Done(Y) &lt;
/// Bound(X) was queued when that dequeue began unless the observer (called in dequeue order, nothing else assumed) shows it
/// dequeued before X. (Not the moment X's Post started: a dequeue that read a stale bit of X's level, empty when it began, can take
/// an X posted after it began while a Y posted in between waits above; a version that used it failed once under load.) The cap
/// exception is an over-estimate of the running items of Y's level at X's dequeue: every item of that level dequeued before X,
/// less those whose thread had dequeued another item before X (a thread releases its item's slot before its next dequeue).
/// Over-estimating only skips checks; it never reports a violation that did not happen.</para>
/// <para>A failure prints the plan (shrunk) and FsCheck's replay seed; PRIORITYASYNC_FSCHECK_REPLAY replays it as in
/// <see cref="Reliability.Model.ModelBasedTests"/>.</para>
/// </summary>
public sealed class PoolModelTests
{
    private readonly ITestOutputHelper _output;

    public PoolModelTests(ITestOutputHelper output) => _output = output;

    [Fact]
    public void RandomPlans_ExactlyOnce_PerProducerFifo_StrictPriorityAtEachDequeue() =>
        Check.One(WithReplay(Config.QuickThrowOnFailure.WithMaxTest(40).WithEndSize(30)), Prop.ForAll(Plans, plan => Run(plan).ThrowIfViolated()));

    [Fact]
    [Trait("Category", "Stress")]
    public void RandomPlans_ForAShareOfTheStressBudget_InvariantsHold()
    {
        var stopwatch = Stopwatch.StartNew();
        TimeSpan budget = StressSettings.Fraction(0.3);
        int cases = 0;
        while (stopwatch.Elapsed < budget)
        {
            Check.One(Config.QuickThrowOnFailure.WithMaxTest(50).WithEndSize(80), Prop.ForAll(Plans, plan => Run(plan).ThrowIfViolated()));
            cases += 50;
        }

        _output.WriteLine($"{cases} plans in {stopwatch.Elapsed.TotalSeconds:F1} s");
    }

    // ---- The plans ------------------------------------------------------------------------------------------------------------

    internal enum PolicyChoice
    {
        Strict,
        Aging,
        Shares,
    }

    /// <summary>One step of a producer: post at a level; producer 0 also releases the hold and completes the pool.</summary>
    internal abstract record Op
    {
        public sealed record Post(int Level) : Op
        {
            public override string ToString() => $"p{Level}";
        }

        public sealed record Release : Op
        {
            public override string ToString() => "Release";
        }

        public sealed record Complete : Op
        {
            public override string ToString() => "Complete";
        }
    }

    internal sealed record Plan(int Threads, int Levels, int[]? Caps, PolicyChoice Policy, bool Held, IReadOnlyList<IReadOnlyList<Op>> Producers)
    {
        public override string ToString() =>
            $"{Threads} threads, {Levels} levels, caps {(Caps is null ? "none" : "[" + string.Join(",", Caps) + "]")}, {Policy}, " +
            $"{(Held ? "held" : "live")}: " + string.Join(" || ", Producers.Select((ops, i) => $"producer {i}: " + string.Join(" ", ops)));
    }

    internal static Arbitrary<Plan> Plans => Arb.From(PlanGen, Shrink);

    private static Gen<Plan> PlanGen =>
        from threads in Gen.Choose(1, 4)
        from levels in Gen.Choose(1, 4)
        from held in Gen.Elements(true, false)
        from capped in Gen.Elements(true, false, false)
        from rawCaps in Gen.ArrayOf(Gen.Choose(1, threads), levels)
        from policy in Gen.Frequency((6, Gen.Constant(PolicyChoice.Strict)), (1, Gen.Constant(PolicyChoice.Aging)), (1, Gen.Constant(PolicyChoice.Shares)))
        from producerCount in Gen.Choose(1, 3)
        from producers in Gen.ArrayOf(Gen.Sized(size => Gen.ListOf(Gen.Choose(0, levels - 1).Select(l => (Op)new Op.Post(l)), Math.Max(1, size))), producerCount)
        from completeAt in Gen.Choose(0, 40)
        from releaseAt in Gen.Choose(0, 40)
        select new Plan(
            threads,
            levels,
            // The hold blocks every thread at the top level, so a held plan leaves the top level uncapped.
            capped ? rawCaps.Select((cap, level) => held && level == levels - 1 ? threads : cap).ToArray() : null,
            policy,
            held,
            WithControlOps(producers.Select(p => p.ToArray()).ToArray(), held, completeAt, releaseAt));

    /// <summary>Producer 0 completes the pool at a random point (at the end when the point is past it) and, when held, releases the
    /// hold at another (Release is always before Complete: a held pool cannot end, and a Complete before the release is also a case,
    /// so half the time Complete goes first).</summary>
    private static IReadOnlyList<IReadOnlyList<Op>> WithControlOps(Op[][] producers, bool held, int completeAt, int releaseAt)
    {
        var first = new List<Op>(producers[0]);
        if (held)
        {
            first.Insert(Math.Min(releaseAt, first.Count), new Op.Release());
        }

        first.Insert(Math.Min(completeAt, first.Count), new Op.Complete());
        producers[0] = first.ToArray();
        return producers;
    }

    /// <summary>Shrinks by dropping one post of one producer, or a whole producer other than the first.</summary>
    private static IEnumerable<Plan> Shrink(Plan plan)
    {
        for (int p = 1; p < plan.Producers.Count; p++)
        {
            yield return plan with { Producers = plan.Producers.Where((_, i) => i != p).ToArray() };
        }

        for (int p = 0; p < plan.Producers.Count; p++)
        {
            for (int i = 0; i < plan.Producers[p].Count; i++)
            {
                if (plan.Producers[p][i] is Op.Post)
                {
                    int skip = i;
                    int producer = p;
                    yield return plan with
                    {
                        Producers = plan.Producers.Select((ops, q) => q == producer ? ops.Where((_, j) => j != skip).ToArray() : ops).ToArray(),
                    };
                }
            }
        }
    }

    private static Config WithReplay(Config config)
    {
        string? replay = Environment.GetEnvironmentVariable(Reliability.Model.ModelBasedTests.ReplayVariable);
        if (string.IsNullOrWhiteSpace(replay))
        {
            return config;
        }

        ulong[] parts = replay.Trim('(', ')', ' ').Split(',').Select(p => ulong.Parse(p.Trim(), System.Globalization.CultureInfo.InvariantCulture)).ToArray();
        Microsoft.FSharp.Core.FSharpOption<int> size = parts.Length > 2 ? (int)parts[2] : Microsoft.FSharp.Core.FSharpOption<int>.None;
        return config.WithReplay(new Replay(new Rnd(parts[0], parts[1]), size));
    }

    // ---- The run --------------------------------------------------------------------------------------------------------------

    /// <summary>One posted callback, and what the run recorded about it.</summary>
    private sealed class Item(Recorder recorder, int producer, int level, int index)
    {
        public Recorder Recorder { get; } = recorder;

        public int Producer { get; } = producer;

        public int Level { get; } = level;

        public int Index { get; } = index; // the producer's program order

        public Action? Gate { get; init; } // the hold items only: blocks the thread

        public long Done; // the counter just after Post returned (0: not yet)
        public long Bound; // a counter value before this item's dequeue started (see the class remarks)
        public int Runs;
        public int Drops;
        public int Thread;
        public int DequeuedAt = -1; // the position in the dequeue order

        public override string ToString() => Producer < 0 ? $"hold@L{Level}" : $"P{Producer}#{Index}@L{Level}";
    }

    /// <summary>Everything one run records; the pool writes it from its threads, the checks read it after the pool has ended.</summary>
    private sealed class Recorder
    {
        private readonly object _orderLock = new();
        private long _clock;
        private long _dequeueBegan; // the counter as the dequeue in progress began: written and read under the pool's observer lock

        public List<Item> Order { get; } = []; // dequeue order, as the observer sees it

        public ConcurrentQueue<object?> Unknown { get; } = new();

        public long Tick() => Interlocked.Increment(ref _clock);

        public void OnDequeueStarting() => _dequeueBegan = Tick();

        public void OnDequeued(object? state)
        {
            if (state is not Item item)
            {
                Unknown.Enqueue(state);
                return;
            }

            lock (_orderLock) // the observer's contract is "called in dequeue order", not "called under one lock"
            {
                item.Bound = _dequeueBegan; // the hook's stamp for this same dequeue: same critical section in the pool
                item.DequeuedAt = Order.Count;
                Order.Add(item);
            }
        }

        public static readonly SendOrPostCallback Run = static state =>
        {
            var item = (Item)state!;
            item.Thread = Environment.CurrentManagedThreadId;
            Interlocked.Increment(ref item.Runs);
            item.Gate?.Invoke();
            Thread.SpinWait(10 + (item.Index % 7) * 20); // a little work, varied, so threads overlap
        };
    }

    private sealed class Result(Plan plan)
    {
        private readonly StringBuilder _violations = new();

        public int Count { get; private set; }

        public void Violation(string what)
        {
            if (Count++ < 10)
            {
                _violations.AppendLine(what);
            }
        }

        public void ThrowIfViolated()
        {
            if (Count > 0)
            {
                throw new InvalidOperationException($"{Count} violation(s) in {plan}:{Environment.NewLine}{_violations}");
            }
        }
    }

    private static PriorityPolicy PolicyFor(PolicyChoice choice, int levels) => choice switch
    {
        PolicyChoice.Aging => PriorityPolicy.Aging(Enumerable.Range(0, levels).Select(l => TimeSpan.FromMilliseconds(1 + l)).ToArray()),
        PolicyChoice.Shares => PriorityPolicy.WeightedShares(Enumerable.Range(0, levels).Select(l => 1 + l).ToArray()),
        _ => PriorityPolicy.Strict,
    };

    private static Result Run(Plan plan)
    {
        var recorder = new Recorder();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            ThreadCount = plan.Threads,
            Levels = plan.Levels,
            MaxConcurrencyPerLevel = plan.Caps,
            Policy = PolicyFor(plan.Policy, plan.Levels),
            Name = "pool-model",
            StallTimeout = null,
            // From the construction: hooks set on the pool once it runs could miss a dequeue its thread had already begun (a held
            // plan's hold item once ran unobserved, and every later dequeue looked like it overtook it).
            DequeueHooksForTests = ((_, state) => recorder.OnDequeued(state), recorder.OnDequeueStarting),
        });
        pool.WorkDropped += (_, e) =>
        {
            if (e.State is Item item)
            {
                Interlocked.Increment(ref item.Drops);
            }
        };

        // The hold: one item per thread at the top level, each blocking its thread until producer 0 releases it.
        var all = new ConcurrentQueue<Item>();
        var release = new ManualResetEventSlim(false); // not disposed: a hold item may still be waking from it as the test ends
        if (plan.Held)
        {
            var entered = new CountdownEvent(plan.Threads); // not disposed: the last hold item may still be inside Signal
            for (int i = 0; i < plan.Threads; i++)
            {
                var hold = new Item(recorder, -1, plan.Levels - 1, i)
                {
                    Gate = () =>
                    {
                        entered.Signal();
                        release.WaitOrFail("producer 0 to release the hold");
                    },
                };
                all.Enqueue(hold);
                Post(pool, hold);
            }

            entered.Wait(TestTimeout.Unexpected).Should().BeTrue("every thread to enter the hold");
        }

        long completedAt = long.MaxValue;
        using var go = new ManualResetEventSlim(false);
        Thread[] producers = plan.Producers.Select((ops, p) => new Thread(() =>
        {
            go.Wait();
            for (int i = 0; i < ops.Count; i++)
            {
                switch (ops[i])
                {
                    case Op.Post post:
                        var item = new Item(recorder, p, post.Level, i);
                        all.Enqueue(item);
                        Post(pool, item);
                        break;
                    case Op.Release:
                        release.Set();
                        break;
                    case Op.Complete:
                        Volatile.Write(ref completedAt, recorder.Tick()); // before the call: every Post that returned earlier must run
                        pool.Complete();
                        break;
                }
            }
        }) { IsBackground = true, Name = $"pool-model producer {p}" }).ToArray();

        foreach (Thread producer in producers)
        {
            producer.Start();
        }

        go.Set();
        foreach (Thread producer in producers)
        {
            producer.Join(TestTimeout.Unexpected).Should().BeTrue("the producers end");
        }

        release.Set();
        pool.Completion.Wait(TestTimeout.Unexpected).Should().BeTrue("the pool ends after Complete");
        return Verify(plan, pool, recorder, all.ToArray(), completedAt);
    }

    private static void Post(PriorityThreadPool pool, Item item)
    {
        pool.GetSynchronizationContext(item.Level).Post(Recorder.Run, item);
        Volatile.Write(ref item.Done, item.Recorder.Tick());
    }

    private static Result Verify(Plan plan, PriorityThreadPool pool, Recorder recorder, Item[] all, long completedAt)
    {
        var result = new Result(plan);

        // 1. Exactly once; what was queued before Complete runs; the drops are counted.
        foreach (Item item in all)
        {
            if (item.Runs + item.Drops != 1 || (item.Runs == 1) != (item.DequeuedAt >= 0))
            {
                result.Violation($"{item}: ran {item.Runs}, dropped {item.Drops}, dequeued at {item.DequeuedAt}");
            }

            if (item.Done < completedAt && item.Runs == 0)
            {
                result.Violation($"{item}: its Post returned before Complete, yet it did not run");
            }
        }

        if (!recorder.Unknown.IsEmpty)
        {
            result.Violation($"the observer saw {recorder.Unknown.Count} state(s) the test did not post");
        }

        long drops = all.Sum(i => (long)i.Drops);
        if (pool.GetSnapshot().DroppedCount != drops)
        {
            result.Violation($"the snapshot counts {pool.GetSnapshot().DroppedCount} drops, WorkDropped reported {drops}");
        }

        // 2. Per producer FIFO of dequeue within a level.
        foreach (IGrouping<(int Producer, int Level), Item> group in all.Where(i => i.Producer >= 0 && i.DequeuedAt >= 0).GroupBy(i => (i.Producer, i.Level)))
        {
            Item? previous = null;
            foreach (Item item in group.OrderBy(i => i.Index))
            {
                if (previous is not null && item.DequeuedAt < previous.DequeuedAt)
                {
                    result.Violation($"FIFO: {item} dequeued at {item.DequeuedAt}, before {previous} (posted earlier by the same producer) at {previous.DequeuedAt}");
                }

                previous = item;
            }
        }

        // 3. Strict priority at each dequeue.
        if (plan.Policy == PolicyChoice.Strict)
        {
            CheckStrictPriority(plan, recorder.Order, all, result);
        }

        return result;
    }

    private static void CheckStrictPriority(Plan plan, List<Item> order, Item[] all, Result result)
    {
        // The dequeue positions of each thread's items, for the release rule of the cap over-estimate.
        Dictionary<int, List<int>> byThread = order.GroupBy(i => i.Thread).ToDictionary(g => g.Key, g => g.Select(i => i.DequeuedAt).OrderBy(x => x).ToList());
        foreach (Item x in order)
        {
            foreach (Item y in all)
            {
                if (y.Level <= x.Level || y.Done == 0 || y.Done >= x.Bound || (y.DequeuedAt >= 0 && y.DequeuedAt < x.DequeuedAt))
                {
                    continue; // not above, or not surely queued before X's dequeue started, or already dequeued
                }

                if (MayBeAtCap(plan, order, byThread, y.Level, x.DequeuedAt))
                {
                    continue;
                }

                result.Violation($"priority: {x} dequeued at {x.DequeuedAt} while {y} (Post returned at {y.Done} < {x.Bound}) waited above, " +
                    $"{(y.DequeuedAt < 0 ? "never dequeued" : $"dequeued later at {y.DequeuedAt}")}");
            }
        }
    }

    /// <summary>Whether <paramref name="level"/> may have been at its cap at dequeue <paramref name="position"/>: counts the items of the
    /// level dequeued earlier whose thread had not dequeued another item before that position (an over-estimate of the running ones).</summary>
    private static bool MayBeAtCap(Plan plan, List<Item> order, Dictionary<int, List<int>> byThread, int level, int position)
    {
        int cap = plan.Caps?[level] ?? plan.Threads;
        if (cap >= plan.Threads)
        {
            return false; // a level that may use every thread is never skipped for its cap
        }

        int running = 0;
        for (int i = 0; i < position; i++)
        {
            Item a = order[i];
            if (a.Level == level && !byThread[a.Thread].Exists(p => p > i && p < position))
            {
                running++;
            }
        }

        return running >= cap;
    }
}
