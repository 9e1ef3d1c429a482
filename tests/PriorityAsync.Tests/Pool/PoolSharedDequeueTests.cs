using System.Diagnostics;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Reliability;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// LevelQueues' M1, the dequeue of the pool's lock-free mode (several consumers): an item whose enqueue returned before a dequeue began
/// is not overtaken by it, even while another consumer's clear has the item's bit clear for a moment.
/// </summary>
public sealed class PoolSharedDequeueTests
{
    private static WorkItem Item(object state) => new(static _ => { }, state, null, 0);

    [Fact]
    public void TryDequeueHighestShared_InsideAnotherConsumersClearWindow_TakesTheHigherItemNotTheLowerOne()
    {
        // The window: another consumer has cleared level 2's bit (and not yet looked again) while level 2 holds an item whose enqueue
        // returned. The mask alone shows only level 0.
        var queues = new LevelQueues(3);
        queues.Enqueue(0, Item("low"));
        queues.Enqueue(2, Item("high"));
        bool took = false;
        WorkItem taken = default;
        int level = -1;
        queues.InSharedClearWindowForTests(2, () =>
        {
            queues.NonEmptyMask.Should().Be(0b001, "the window: level 2's bit is clear over its item");
            took = queues.TryDequeueHighestShared(out taken, out level);
        });

        took.Should().BeTrue();
        level.Should().Be(2, "the level-2 item was published before this dequeue began");
        taken.State.Should().Be("high");
        queues.TryDequeueHighestShared(out taken, out level).Should().BeTrue();
        (level, taken.State).Should().Be((0, (object)"low"));
        queues.TryDequeueHighestShared(out _, out _).Should().BeFalse();
        queues.NonEmptyMask.Should().Be(0, "the empty dequeues cleared the stale bits");
    }

    [Fact]
    public void TryDequeueHighestShared_WithoutAClearWindow_TakesByTheMask_FifoWithinALevel_AndClearsStaleBits()
    {
        var queues = new LevelQueues(4);
        queues.Enqueue(1, Item("1a"));
        queues.Enqueue(3, Item("3a"));
        queues.Enqueue(1, Item("1b"));
        var order = new List<(int, object?)>();
        while (queues.TryDequeueHighestShared(out WorkItem item, out int level))
        {
            order.Add((level, item.State));
        }

        order.Should().Equal((3, "3a"), (1, "1a"), (1, "1b"));
        queues.NonEmptyMask.Should().Be(0);
    }
}

/// <summary>The reviewer's race for M1, on real threads: consumers dequeue from the shared queues while a producer publishes one high
/// item at a time over a level kept full of low items; no consumer may take a low item while a high item published before its dequeue
/// began still waits. The consumers' own clears open the window now and then (a few nanoseconds each); one more thread stands for a
/// consumer preempted inside its clear, which holds the window open for as long as the OS keeps it off its core, so the race is met
/// in every run rather than once in millions of rounds.</summary>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class PoolSharedDequeueStressTests(ITestOutputHelper output)
{
    [Fact]
    public void TryDequeueHighestShared_ConsumersRacingClears_NeverTakeALowItemWhileAnEarlierHighItemWaits()
    {
        const int High = 3;
        var queues = new LevelQueues(High + 1);
        var filler = new WorkItem(static _ => { }, "filler", null, 0);
        for (int i = 0; i < 64; i++)
        {
            queues.Enqueue(0, filler);
        }

        long published = 0; // the round whose high item's Enqueue has returned
        long taken = 0; // the round whose high item a consumer has taken
        int violations = 0;
        bool stop = false;

        void Consumer()
        {
            while (!Volatile.Read(ref stop))
            {
                long round = Volatile.Read(ref published); // read before the dequeue begins
                if (!queues.TryDequeueHighestShared(out WorkItem item, out int level))
                {
                    continue;
                }

                if (level == High)
                {
                    Volatile.Write(ref taken, (long)item.State!);
                    continue;
                }

                // A low item was taken by a dequeue that began after round `round`'s high item was published. If that item is still
                // queued now (the next round's is published only once taken == round), it waited through this whole dequeue.
                if (round > 0 && !queues.IsEmpty(High) && Volatile.Read(ref taken) < round)
                {
                    Interlocked.Increment(ref violations);
                }

                queues.Enqueue(0, item); // keep the low level full
            }
        }

        void PreemptedClearer()
        {
            while (!Volatile.Read(ref stop))
            {
                queues.InSharedClearWindowForTests(High, static () => Thread.SpinWait(50));
                Thread.SpinWait(50);
            }
        }

        Thread[] consumers = Enumerable.Range(0, 2).Select(i => new Thread(Consumer) { IsBackground = true, Name = $"consumer {i}" })
            .Append(new Thread(PreemptedClearer) { IsBackground = true, Name = "preempted clearer" })
            .ToArray();
        foreach (Thread consumer in consumers)
        {
            consumer.Start();
        }

        // The budget, and at least MinRounds rounds however loaded the machine (a round needs both consumers and the producer to be
        // scheduled: beside another test run, one second held 82), up to the unexpected-wait bound.
        const long MinRounds = 200;
        var clock = Stopwatch.StartNew();
        TimeSpan budget = StressSettings.Fraction(0.5);
        long rounds = 0;
        while ((clock.Elapsed < budget || rounds < MinRounds) && clock.Elapsed < Infrastructure.TestTimeout.Unexpected
            && Volatile.Read(ref violations) == 0)
        {
            rounds++;
            queues.Enqueue(High, new WorkItem(static _ => { }, rounds, null, 0));
            Volatile.Write(ref published, rounds);
            var wait = default(SpinWait);
            long publishedAt = Stopwatch.GetTimestamp();
            while (Volatile.Read(ref taken) != rounds)
            {
                if (Stopwatch.GetElapsedTime(publishedAt) > Infrastructure.TestTimeout.Unexpected)
                {
                    // Stop the consumers first: spinning on, they would slow every test that runs after this one.
                    Volatile.Write(ref stop, true);
                    throw new TimeoutException($"Timed out after {Infrastructure.TestTimeout.Unexpected.TotalSeconds} s waiting for a consumer to take the high item of round {rounds} (a lost item: its bit clear over it).");
                }

                wait.SpinOnce(sleep1Threshold: -1);
            }
        }

        Volatile.Write(ref stop, true);
        foreach (Thread consumer in consumers)
        {
            consumer.Join(Infrastructure.TestTimeout.Unexpected).Should().BeTrue("the consumers stop");
        }

        output.WriteLine($"{rounds} rounds in {clock.Elapsed.TotalSeconds:F1} s, {violations} violations");
        violations.Should().Be(0, $"no dequeue overtook a high item published before it began ({rounds} rounds)");
        rounds.Should().BeGreaterThanOrEqualTo(MinRounds, "the race ran often enough to mean something");
    }
}
