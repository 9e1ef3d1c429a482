using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Reliability.Stress;

/// <summary>
/// Several producer threads post items at random levels while the loop runs. Checked on the loop, per item, with sequence numbers
/// and publication markers (never with timing):
/// <list type="bullet">
/// <item>exactly once and FIFO per producer and level: item (p, L) number n must be the n-th item of (p, L) to run;</item>
/// <item>strict priority: when an item of level L runs, every item of a level above L whose Post had returned before this item was
/// dequeued has already run.</item>
/// </list>
/// The same run under each policy (PriorityPolicy), with the policy's own rule in place of strict priority:
/// <list type="bullet">
/// <item>aging: such an inversion (a level-L item running while published higher work waits) is allowed only for an item whose wait
/// passed its level's bound. The wait is measured with the test's own stamps around the library's (before Post, at the start of the
/// run, the same Stopwatch clock), so it is never shorter than the wait the library saw: the check cannot fail a correct loop.</item>
/// <item>weighted shares (W1): the level run had the least virtual run time among the levels holding published work (ties to the
/// higher level), read from the policy's state while the item runs (it changes only between items).</item>
/// </list>
/// </summary>
/// <remarks>
/// <para>"Had returned before this item was dequeued" is made observable with publication markers: producer p writes
/// <c>published[p, L] = n + 1</c> (a release write) after its n-th Post at level L returned. The last thing every item does on the loop is
/// to read all markers (acquire reads) into a snapshot; the loop dequeues the next item after that, so every item counted in the snapshot
/// was published before the next dequeue and, by invariant I1 of LevelQueues, its level's bit was set when the loop chose a level.
/// So when the next item (level L) runs, for every level H above L and every producer p, the number of (p, H) items run so far must be at
/// least the snapshot's <c>published[p, H]</c>. Items whose Post was still in flight at the snapshot are correctly not required.</para>
/// <para>Producers are throttled (at most <see cref="MaxInFlightPerProducer"/> items not yet run) so the queues stay bounded and hold a
/// changing mix of levels. A small share of the items goes through the level's TaskScheduler and through Send instead of Post: they share
/// the level's FIFO queue, so the same checks apply. The loop itself posts too (about one item in five), as a fourth source under the
/// same checks: its unfenced enqueue path races the producers' enqueues and its own bit clearing.</para>
/// </remarks>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class OrderingStressTests(ITestOutputHelper output)
{
    private const int Levels = 4;
    private const int Producers = 3;

    // Source Producers (the last one) is the loop itself: items posted from the loop thread (LevelQueues.EnqueueFromConsumer, no fence)
    // race the producers' enqueues and the consumer's bit clearing just the same.
    private const int Sources = Producers + 1;
    private const int LoopSource = Producers;
    private const int MaxInFlightPerProducer = 32 * 1024;

    // Producer p's markers for level L live at [p * Stride + L]: one cache line pair per producer, no false sharing.
    private const int Stride = 16;

    // Aging: a short bound for every level, so that the deep queues of this test expire all the time and the rule is exercised.
    private static readonly TimeSpan s_agingBound = TimeSpan.FromMilliseconds(1);

    [Theory]
    [InlineData("strict")]
    [InlineData("aging")]
    [InlineData("shares")]
    public async Task Post_ManyProducersRandomLevels_ExactlyOnceFifoAndThePolicysOrder(string policyName)
    {
        PriorityPolicy policy = policyName switch
        {
            "aging" => PriorityPolicy.Aging(Enumerable.Repeat(s_agingBound, Levels).ToArray()),
            "shares" => PriorityPolicy.WeightedShares(1, 2, 4, 8),
            _ => PriorityPolicy.Strict,
        };
        var options = new PriorityContextOptions { Levels = Levels, Name = nameof(OrderingStressTests), Policy = policy };
        var loop = new PriorityContextThread(options);
        var checker = new Checker(loop.Context);
        long dropped = 0;
        loop.Context.WorkDropped += (_, _) => Interlocked.Increment(ref dropped);

        // Strict keeps the whole budget (as before policies existed); the other two share the rest of it.
        TimeSpan duration = policy == PriorityPolicy.Strict ? StressSettings.Duration : StressSettings.Fraction(0.5);
        var stopwatch = Stopwatch.StartNew();
        var producers = new Thread[Producers];
        var failures = new Exception?[Producers];
        for (int p = 0; p < Producers; p++)
        {
            int producer = p;
            producers[p] = new Thread(() =>
            {
                try
                {
                    Produce(loop.Context, checker, producer, seed: 1000 + producer, stopwatch, duration);
                }
                catch (Exception ex)
                {
                    failures[producer] = ex;
                }
            })
            { IsBackground = true, Name = $"producer {p}" };
            producers[p].Start();
        }

        foreach (Thread t in producers)
        {
            // The producers run for the whole budget; only beyond that does a hang (a Send that never returns) count.
            if (!t.Join(duration + TestTimeout.Unexpected))
            {
                throw new TimeoutException($"{t.Name} did not finish {TestTimeout.Unexpected.TotalSeconds} s after the stress budget: a deadlock or a lost Send.");
            }
        }

        // Every item was posted before Complete, so every one of them must run: nothing may be dropped.
        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish the remaining items");
        stopwatch.Stop();

        failures.Where(f => f is not null).Should().BeEmpty();
        long posted = 0;
        long ran = 0;
        for (int p = 0; p < Sources; p++)
        {
            for (int level = 0; level < Levels; level++)
            {
                long sent = Volatile.Read(ref checker.Published[(p * Stride) + level]);
                long done = checker.Ran[(p * Stride) + level];
                done.Should().Be(sent, $"every item of source {p} at level {level} must run exactly once");
                posted += sent;
                ran += done;
            }
        }

        checker.ChoicesOverLowerWork.Should().BeGreaterThan(0, "lower-level work must sometimes have been waiting, or the priority check proved nothing");
        if (policy != PriorityPolicy.Strict)
        {
            checker.ChoicesOverHigherWork.Should().BeGreaterThan(0, $"under {policy} lower levels must sometimes have run while higher work waited, or its rule was never exercised");
        }

        checker.Violations.Should().Be(0, "no violation may occur; the first ones: " + string.Join(" | ", checker.FirstViolations));
        Interlocked.Read(ref dropped).Should().Be(0);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(0);
        posted.Should().BeGreaterThan(100_000, "the stress must have exercised something");
        output.WriteLine(
            $"{posted:N0} items ({checker.LoopPosts:N0} of them posted by the loop itself) from {Producers} producers at {Levels} levels in {stopwatch.Elapsed.TotalSeconds:F1} s " +
            $"({posted / stopwatch.Elapsed.TotalSeconds:N0} items/s); {checker.ChoicesOverLowerWork:N0} items ran " +
            $"while published lower-level work waited, {checker.ChoicesOverHigherWork:N0} while published higher-level work waited ({policy}); throttled waits: {Volatile.Read(ref checker.ThrottleWaits):N0}");
    }

    private static void Produce(PriorityContext context, Checker checker, int producer, int seed, Stopwatch stopwatch, TimeSpan duration)
    {
        var random = new Random(seed);
        var syncContexts = Enumerable.Range(0, Levels).Select(context.GetSynchronizationContext).ToArray();
        var factories = Enumerable.Range(0, Levels).Select(context.GetTaskFactory).ToArray();
        var sequence = new long[Levels];
        long postedTotal = 0;
        while (true)
        {
            // Check the clock once per batch: Stopwatch is cheap but not free.
            if ((postedTotal & 1023) == 0 && stopwatch.Elapsed >= duration)
            {
                return;
            }

            // Throttle: keep at most MaxInFlightPerProducer items of this producer waiting. Yielding, not spinning hard, on 2 cores.
            while (postedTotal - Volatile.Read(ref checker.RanTotal[producer * Stride]) >= MaxInFlightPerProducer)
            {
                Interlocked.Increment(ref checker.ThrottleWaits);
                if (stopwatch.Elapsed > duration + TestTimeout.Unexpected)
                {
                    // The loop stopped running this producer's items: fail rather than spin on for the rest of the test run.
                    throw new TimeoutException($"producer {producer}: its queued items stopped running {TestTimeout.Unexpected.TotalSeconds} s after the stress budget (a lost item or wake-up, or a stopped loop).");
                }

                Thread.Yield();
            }

            int level = random.Next(Levels);
            var item = new StressItem(checker, producer, level, sequence[level], Stopwatch.GetTimestamp());
            int api = random.Next(10_000);
            if (api < 9_900)
            {
                syncContexts[level].Post(StressItem.Callback, item);
            }
            else if (api < 9_995)
            {
                _ = factories[level].StartNew(StressItem.Run, item);
            }
            else
            {
                // Send returns after the item ran; it still goes through the level's FIFO queue.
                syncContexts[level].Send(StressItem.Callback, item);
            }

            // Published: this Post (or StartNew, or Send) has returned. Release write, read by the loop's snapshot.
            sequence[level]++;
            Volatile.Write(ref checker.Published[(producer * Stride) + level], sequence[level]);
            postedTotal++;
        }
    }

    // postedAt: the Stopwatch before Post (the library stamps its enqueue time after it, with the same clock, under aging).
    private sealed class StressItem(Checker checker, int producer, int level, long sequence, long postedAt)
    {
        public static readonly SendOrPostCallback Callback = static state => ((StressItem)state!).RunOnLoop();

        public static readonly Action<object?> Run = static state => ((StressItem)state!).RunOnLoop();

        private void RunOnLoop() => checker.OnRun(producer, level, sequence, postedAt);
    }

    /// <summary>State touched by the loop thread only, except the markers (written by producers) and RanTotal (read by producers).</summary>
    private sealed class Checker
    {
        public readonly long[] Published = new long[Sources * Stride];
        public readonly long[] Ran = new long[Sources * Stride];
        public readonly long[] RanTotal = new long[Sources * Stride];
        public readonly List<string> FirstViolations = new();
        public long ThrottleWaits;
        public long Violations;
        public long ChoicesOverLowerWork;
        public long ChoicesOverHigherWork;

        // The markers as read at the end of the previous item: all of these had been published before the current item was dequeued.
        private readonly long[] _snapshot = new long[Sources * Stride];
        private readonly PrioritySynchronizationContext[] _syncContexts;
        private readonly Random _random = new(4242);
        private readonly PriorityContext _context;
        private readonly bool[] _waiting = new bool[Levels];
        private readonly long _agingBoundTicks = (long)(s_agingBound.TotalSeconds * Stopwatch.Frequency);

        public Checker(PriorityContext context)
        {
            _context = context;
            _syncContexts = Enumerable.Range(0, Levels).Select(context.GetSynchronizationContext).ToArray();
        }

        public long LoopPosts { get; private set; }

        public void OnRun(int producer, int level, long sequence, long postedAt)
        {
            long startedAt = Stopwatch.GetTimestamp();
            if (PriorityContext.CurrentLevel != level)
            {
                Violation($"item ({producer}, L{level}) #{sequence} ran at level {PriorityContext.CurrentLevel}");
            }

            // Exactly once and FIFO per producer and level: the n-th item to run must carry sequence n.
            int index = (producer * Stride) + level;
            if (sequence != Ran[index])
            {
                Violation($"producer {producer} level {level}: expected #{Ran[index]} to run next, got #{sequence} (lost, duplicated or reordered)");
            }

            // The policy's order against everything published before this item was dequeued.
            bool lowerWasWaiting = false;
            bool higherWasWaiting = false;
            bool[] waiting = _waiting;
            Array.Clear(waiting);
            for (int p = 0; p < Sources; p++)
            {
                for (int other = 0; other < Levels; other++)
                {
                    int o = (p * Stride) + other;
                    if (Ran[o] < _snapshot[o])
                    {
                        waiting[other] = true;
                        lowerWasWaiting |= other < level;
                        higherWasWaiting |= other > level;
                        if (other > level && _context.Policy == PriorityPolicy.Strict)
                        {
                            Violation($"item ({producer}, L{level}) #{sequence} ran while ({p}, L{other}) #{Ran[o]} was published " +
                                      $"({_snapshot[o]} published before the dequeue) and still waiting");
                        }
                    }
                }
            }

            if (higherWasWaiting && _context.AgingDispatch is not null && startedAt - postedAt <= _agingBoundTicks)
            {
                Violation($"aging: item ({producer}, L{level}) #{sequence} ran before published higher work after waiting only " +
                          $"{(startedAt - postedAt) * 1e6 / Stopwatch.Frequency:F0} us, within its bound");
            }

            if (_context.SharesDispatch is { } shares)
            {
                double mine = shares.VirtualRunTime(level);
                for (int other = 0; other < Levels; other++)
                {
                    double theirs = shares.VirtualRunTime(other);
                    if (waiting[other] && (theirs < mine || (theirs == mine && other > level)))
                    {
                        Violation($"shares: level {level} ran at virtual run time {mine} while level {other} held published work at {theirs}");
                    }
                }
            }

            if (lowerWasWaiting)
            {
                // The loop had a real choice (published lower-level work was waiting) and took the more urgent item.
                ChoicesOverLowerWork++;
            }

            if (higherWasWaiting)
            {
                ChoicesOverHigherWork++;
            }

            Ran[index] = sequence + 1;
            Volatile.Write(ref RanTotal[producer * Stride], RanTotal[producer * Stride] + 1);

            // Now and then the loop posts too (about one item in five; each such item posts again with the same odds, so chains die out).
            if (_random.Next(5) == 0)
            {
                int loopLevel = _random.Next(Levels);
                int loopIndex = (LoopSource * Stride) + loopLevel;
                long loopSequence = Published[loopIndex];
                _syncContexts[loopLevel].Post(StressItem.Callback, new StressItem(this, LoopSource, loopLevel, loopSequence, Stopwatch.GetTimestamp()));
                Volatile.Write(ref Published[loopIndex], loopSequence + 1);
                LoopPosts++;
            }

            // Last: snapshot the markers. The loop dequeues the next item after this.
            for (int p = 0; p < Sources; p++)
            {
                for (int l = 0; l < Levels; l++)
                {
                    _snapshot[(p * Stride) + l] = Volatile.Read(ref Published[(p * Stride) + l]);
                }
            }
        }

        private void Violation(string what)
        {
            Violations++;
            if (FirstViolations.Count < 10)
            {
                FirstViolations.Add(what);
            }
        }
    }
}
