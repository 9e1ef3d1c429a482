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

    [Fact]
    public async Task Post_ManyProducersRandomLevels_ExactlyOnceFifoAndStrictPriority()
    {
        var options = new PriorityContextOptions { Levels = Levels, Name = nameof(OrderingStressTests) };
        var loop = new PriorityContextThread(options);
        var checker = new Checker(loop.Context);
        long dropped = 0;
        loop.Context.WorkDropped += (_, _) => Interlocked.Increment(ref dropped);

        TimeSpan duration = StressSettings.Duration;
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
        checker.Violations.Should().Be(0, "no violation may occur; the first ones: " + string.Join(" | ", checker.FirstViolations));
        Interlocked.Read(ref dropped).Should().Be(0);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(0);
        posted.Should().BeGreaterThan(100_000, "the stress must have exercised something");
        output.WriteLine(
            $"{posted:N0} items ({checker.LoopPosts:N0} of them posted by the loop itself) from {Producers} producers at {Levels} levels in {stopwatch.Elapsed.TotalSeconds:F1} s " +
            $"({posted / stopwatch.Elapsed.TotalSeconds:N0} items/s); {checker.ChoicesOverLowerWork:N0} items ran " +
            $"while published lower-level work waited; throttled waits: {Volatile.Read(ref checker.ThrottleWaits):N0}");
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
                Thread.Yield();
            }

            int level = random.Next(Levels);
            var item = new StressItem(checker, producer, level, sequence[level]);
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

    private sealed class StressItem(Checker checker, int producer, int level, long sequence)
    {
        public static readonly SendOrPostCallback Callback = static state => ((StressItem)state!).RunOnLoop();

        public static readonly Action<object?> Run = static state => ((StressItem)state!).RunOnLoop();

        private void RunOnLoop() => checker.OnRun(producer, level, sequence);
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

        // The markers as read at the end of the previous item: all of these had been published before the current item was dequeued.
        private readonly long[] _snapshot = new long[Sources * Stride];
        private readonly PrioritySynchronizationContext[] _syncContexts;
        private readonly Random _random = new(4242);

        public Checker(PriorityContext context)
        {
            _syncContexts = Enumerable.Range(0, Levels).Select(context.GetSynchronizationContext).ToArray();
        }

        public long LoopPosts { get; private set; }

        public void OnRun(int producer, int level, long sequence)
        {
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

            // Strict priority against everything published before this item was dequeued.
            bool lowerWasWaiting = false;
            for (int p = 0; p < Sources; p++)
            {
                for (int lower = 0; lower < level; lower++)
                {
                    int l = (p * Stride) + lower;
                    lowerWasWaiting |= Ran[l] < _snapshot[l];
                }

                for (int higher = level + 1; higher < Levels; higher++)
                {
                    int h = (p * Stride) + higher;
                    if (Ran[h] < _snapshot[h])
                    {
                        Violation($"item ({producer}, L{level}) #{sequence} ran while ({p}, L{higher}) #{Ran[h]} was published " +
                                  $"({_snapshot[h]} published before the dequeue) and still waiting");
                    }
                }
            }

            if (lowerWasWaiting)
            {
                // The loop had a real choice (published lower-level work was waiting) and took the more urgent item.
                ChoicesOverLowerWork++;
            }

            Ran[index] = sequence + 1;
            Volatile.Write(ref RanTotal[producer * Stride], RanTotal[producer * Stride] + 1);

            // Now and then the loop posts too (about one item in five; each such item posts again with the same odds, so chains die out).
            if (_random.Next(5) == 0)
            {
                int loopLevel = _random.Next(Levels);
                int loopIndex = (LoopSource * Stride) + loopLevel;
                long loopSequence = Published[loopIndex];
                _syncContexts[loopLevel].Post(StressItem.Callback, new StressItem(this, LoopSource, loopLevel, loopSequence));
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
