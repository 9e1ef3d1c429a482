using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Controllers;

/// <summary>
/// Producer threads post under one controller while other threads move it (SetLevel) and cancel it, or while the loop finishes. The
/// invariant checked (see the protocol in PriorityTaskController.cs): every item posted under a controller is run exactly once or dropped
/// exactly once (reported through WorkDropped and counted). And, since a controller's queue is FIFO and run items come from its front
/// while a close drops the whole queue and every later post: for each producer, the items that ran are exactly a prefix of its posts,
/// in order, and the dropped ones exactly the rest, in order.
/// </summary>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class ControllerStressTests(ITestOutputHelper output)
{
    private const int Levels = 4;
    private const int Producers = 3;
    private const int ItemsPerProducer = 20_000;

    [Fact]
    public async Task ConcurrentPostsSetLevelAndCancel_EveryItemRunOrDroppedExactlyOnce_PrefixPerProducer()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels, Name = "controller-stress" });
        await using var disposeLoop = loop.BoundedDisposal();
        var stopwatch = Stopwatch.StartNew();
        TimeSpan budget = StressSettings.Fraction(0.25);
        int rounds = 0;
        while (stopwatch.Elapsed < budget || rounds < 3)
        {
            var random = new Random(rounds);
            PriorityTaskController controller = loop.Context.CreateController(random.Next(Levels));
            var log = new Log(ItemsPerProducer);
            EventHandler<WorkDroppedEventArgs> onDropped = (_, e) => log.Dropped(e, DropReason.Cancelled);
            loop.Context.WorkDropped += onDropped;
            int cancelAfter = random.Next(ItemsPerProducer * 5 / 4); // sometimes never: after the last post
            long droppedBefore = loop.Context.GetSnapshot().DroppedCount;

            int producersLeft = Producers;
            var threads = new List<Thread>();
            for (int p = 0; p < Producers; p++)
            {
                int producer = p;
                threads.Add(new Thread(() =>
                {
                    var rnd = new Random(producer + (rounds * 10));
                    for (int seq = 0; seq < ItemsPerProducer; seq++)
                    {
                        controller.Post(Log.Run, log.Item(producer, seq));
                        if (rnd.Next(8) == 0)
                        {
                            loop.Context.GetSynchronizationContext(rnd.Next(Levels)).Post(static _ => { }, null); // plain work to interleave with
                        }

                        if (producer == 0 && seq == cancelAfter)
                        {
                            controller.Cancel();
                        }
                    }

                    Interlocked.Decrement(ref producersLeft);
                }) { IsBackground = true }); // a thread left running by a failed test must not keep the test process alive
            }

            threads.Add(new Thread(() =>
            {
                var rnd = new Random(-rounds);
                while (Volatile.Read(ref producersLeft) > 0)
                {
                    controller.SetLevel(rnd.Next(Levels));
                    Thread.SpinWait(rnd.Next(200));
                }
            }) { IsBackground = true });

            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.JoinOrFail("a producer or the mover"));
            controller.Cancel(); // whatever is still queued is dropped now
            loop.Context.Drain();
            loop.Context.WorkDropped -= onDropped;

            long dropped = log.Check(output, rounds == 0);
            (loop.Context.GetSnapshot().DroppedCount - droppedBefore).Should().Be(dropped, "every dropped item is counted");
            rounds++;
        }

        output.WriteLine($"{rounds} rounds of {Producers} x {ItemsPerProducer} items");
    }

    [Fact]
    public async Task PostsAndSetLevelRacingTheLoopsEnd_EveryItemRunOrDroppedExactlyOnce_PrefixPerProducer()
    {
        var stopwatch = Stopwatch.StartNew();
        TimeSpan budget = StressSettings.Fraction(0.15);
        int rounds = 0;
        while (stopwatch.Elapsed < budget || rounds < 5)
        {
            var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels, Name = "controller-end" });
            PriorityTaskController controller = loop.Context.CreateController(1);
            var log = new Log(ItemsPerProducer / 10);
            loop.Context.WorkDropped += (_, e) => log.Dropped(e, DropReason.PostedAfterCompletion);
            int completeAfter = new Random(rounds).Next(ItemsPerProducer / 10);
            var threads = new List<Thread>();
            for (int p = 0; p < Producers; p++)
            {
                int producer = p;
                threads.Add(new Thread(() =>
                {
                    for (int seq = 0; seq < ItemsPerProducer / 10; seq++)
                    {
                        controller.Post(Log.Run, log.Item(producer, seq));
                        if (seq % 16 == producer)
                        {
                            try
                            {
                                controller.SetLevel(seq % Levels);
                            }
                            catch (ObjectDisposedException)
                            {
                                // The loop finished: SetLevel has nothing left to move.
                            }
                        }

                        if (producer == 0 && seq == completeAfter)
                        {
                            loop.Complete();
                        }
                    }
                }) { IsBackground = true });
            }

            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.JoinOrFail("a producer"));
            loop.Complete();
            await loop.Completion.WithTimeout("the loop to finish");
            long dropped = log.Check(output, rounds == 0);
            loop.Context.GetSnapshot().DroppedCount.Should().Be(dropped, "every dropped item is counted");
            rounds++;
        }

        output.WriteLine($"{rounds} rounds");
    }

    /// <summary>What happened to each item (every producer posts all of its items): 1 ran, 2 dropped; anything else (0 lost, 3 both,
    /// more: twice) fails.</summary>
    private sealed class Log(int itemsPerProducer)
    {
        public static readonly SendOrPostCallback Run = static state => ((Item)state!).Ran();

        private readonly int[,] _fate = new int[Producers, itemsPerProducer];
        private readonly int[] _lastRun = Enumerable.Repeat(-1, Producers).ToArray();
        private readonly List<string> _violations = [];

        public Item Item(int producer, int seq) => new(this, producer, seq);

        public void Dropped(WorkDroppedEventArgs e, DropReason expected)
        {
            if (e.State is Item item)
            {
                lock (_violations)
                {
                    if (e.Reason != expected)
                    {
                        _violations.Add($"{item} dropped with {e.Reason}, expected {expected}");
                    }

                    // No order check here: Cancel reports the queue it took oldest first, but a post that comes after Cancel is
                    // dropped and reported by its own poster, possibly while Cancel is still reporting older items (as with the context's
                    // own drops at its end). The suffix rule in Check is what FIFO leaves checkable.
                    _fate[item.Producer, item.Seq] += 2;
                }
            }
        }

        public void Ran(Item item)
        {
            lock (_violations)
            {
                if (item.Seq != _lastRun[item.Producer] + 1)
                {
                    _violations.Add($"{item} ran after seq {_lastRun[item.Producer]}: not FIFO, or an item was skipped");
                }

                _lastRun[item.Producer] = item.Seq;
                _fate[item.Producer, item.Seq] += 1;
            }
        }

        /// <summary>Checks every item's fate and the prefix rule; returns the number of dropped items.</summary>
        public long Check(ITestOutputHelper output, bool print)
        {
            lock (_violations)
            {
                long dropped = 0;
                for (int p = 0; p < Producers; p++)
                {
                    int posted = _fate.GetLength(1);
                    int ran = _lastRun[p] + 1;
                    for (int seq = 0; seq < posted; seq++)
                    {
                        int fate = _fate[p, seq];
                        int expected = seq < ran ? 1 : 2;
                        if (fate != expected)
                        {
                            _violations.Add($"producer {p} item {seq}: fate {fate}, expected {expected} (ran {ran} items)");
                            break;
                        }

                        dropped += fate == 2 ? 1 : 0;
                    }

                    if (print)
                    {
                        output.WriteLine($"producer {p}: {ran} ran, {_fate.GetLength(1) - ran} dropped");
                    }
                }

                _violations.Should().BeEmpty();
                return dropped;
            }
        }

    }

    private sealed record Item(Log Log, int Producer, int Seq)
    {
        public void Ran() => Log.Ran(this);

        public override string ToString() => $"item {Producer}.{Seq}";
    }
}
