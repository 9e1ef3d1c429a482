using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// The rules that hold across threads, checked at the dequeue itself (the pool's test hook runs in one critical section with the dequeue): every item
/// runs exactly once; within a level, the items of one producer are dequeued in the order it queued them; and at each dequeue no item
/// of a higher level that the dequeuing thread may run is waiting (checked on a pool filled while paused, so no enqueue races it).
/// </summary>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class PoolOrderingStressTests
{
    private sealed record Item(int Producer, int Level, long Sequence);

    [Fact]
    public async Task ConcurrentProducers_ExactlyOnce_AndPerProducerFifoOfDequeueWithinALevel()
    {
        const int Producers = 4;
        const int Levels = 4;
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 3, Levels = Levels, Name = "ordering-stress" });
        await using var disposePool = pool.BoundedDisposal();
        var lastDequeued = new long[Producers, Levels];
        for (int p = 0; p < Producers; p++)
        {
            for (int l = 0; l < Levels; l++)
            {
                lastDequeued[p, l] = -1;
            }
        }

        var violations = new ConcurrentQueue<string>();
        pool.DequeueObserver = (level, state) =>
        {
            if (state is Item item)
            {
                // In one critical section with the dequeue (D-N): one dequeue at a time.
                if (item.Sequence <= lastDequeued[item.Producer, level])
                {
                    violations.Enqueue($"producer {item.Producer} level {level}: {item.Sequence} after {lastDequeued[item.Producer, level]}");
                }

                lastDequeued[item.Producer, level] = item.Sequence;
            }
        };

        // The producers keep at most MaxBacklog items queued or running between them: the levels empty and fill again all the time
        // (the non-empty bits' races of I1 and D-N, which a backlog of millions would never exercise), and the drain at the end stays
        // short whatever the budget (unbounded, the CI budget queued millions of items and their drain took most of the time limit).
        const long MaxBacklog = 2_048;
        var runs = new ConcurrentDictionary<(int, long), int>();
        long produced = 0;
        long ran = 0;
        DateTime end = DateTime.UtcNow + StressSettings.Fraction(0.5);
        Task[] producers = Enumerable.Range(0, Producers).Select(p => Task.Run(() =>
        {
            var random = new Random(p);
            SendOrPostCallback run = state =>
            {
                runs.AddOrUpdate((p, ((Item)state!).Sequence), 1, (_, n) => n + 1);
                Interlocked.Increment(ref ran);
            };
            long sequence = 0;
            var wait = default(SpinWait);
            while (DateTime.UtcNow < end)
            {
                if (Volatile.Read(ref produced) - Volatile.Read(ref ran) >= MaxBacklog)
                {
                    wait.SpinOnce(); // yields, then sleeps: a waiting producer does not keep a pool thread off its core
                    continue;
                }

                wait.Reset();
                int level = random.Next(Levels);
                var item = new Item(p, level, sequence++);
                pool.GetSynchronizationContext(level).Post(run, item);
                Interlocked.Increment(ref produced);
            }
        })).ToArray();
        await Task.WhenAll(producers).WithinBudget("the producers");
        await pool.DisposeAsync().AsTask().WithinBudget("the pool to drain");

        violations.Should().BeEmpty();
        produced.Should().BeGreaterThan(10 * MaxBacklog, "the producers filled and drained the queues many times over");
        runs.Count.Should().Be((int)produced, "every item ran");
        runs.Values.Should().OnlyContain(n => n == 1, "exactly once");
        pool.GetSnapshot().DroppedCount.Should().Be(0);
    }

    [Fact]
    public async Task RandomMixes_AtEveryDequeue_NothingRunnableWaitsAbove()
    {
        DateTime end = DateTime.UtcNow + StressSettings.Fraction(0.3);
        int round = 0;
        while (DateTime.UtcNow < end || round < 5)
        {
            var random = new Random(round);
            int threads = 1 + random.Next(3);
            int levels = 1 + random.Next(5);
            // The top level is never capped: the pause blocks every thread there.
            int[]? caps = random.Next(2) == 0 ? null : Enumerable.Range(0, levels).Select(l => l == levels - 1 ? threads : 1 + random.Next(threads)).ToArray();
            var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
            {
                ThreadCount = threads,
                Levels = levels,
                MaxConcurrencyPerLevel = caps,
                Name = $"mix-{round}",
            });
            await using var disposePool = pool.BoundedDisposal();
            var host = (Queue<int>[])Array.CreateInstance(typeof(Queue<int>), levels);
            for (int l = 0; l < levels; l++)
            {
                host[l] = new Queue<int>();
            }

            // The model: what is queued per level, mirrored at each dequeue (serialised with it by the pool: under the dispatch lock in
            // locked mode, under the observer's own lock in lock-free mode).
            var violations = new ConcurrentQueue<string>();
            var running = new int[levels];
            var lastLevel = new Dictionary<int, int>(); // thread id -> level of the tracked item it dequeued last
            object modelLock = new();
            bool tracking = false;
            pool.DequeueObserver = (level, state) =>
            {
                if (state is not int id || !Volatile.Read(ref tracking))
                {
                    return;
                }

                lock (modelLock)
                {
                    // The pool ends a thread's previous item in the same lock acquisition as this dequeue: mirror it. (A thread that
                    // parks instead ends its item unseen here: the model then counts it as running, which only weakens the check.)
                    if (lastLevel.Remove(Environment.CurrentManagedThreadId, out int previous))
                    {
                        running[previous]--;
                    }

                    lastLevel[Environment.CurrentManagedThreadId] = level;
                    int expected = host[level].Dequeue(); // no assertion here: this runs on a pool thread, inside the pool's dequeue
                    if (expected != id)
                    {
                        violations.Enqueue($"round {round}: level {level} dequeued {id}, FIFO says {expected}");
                    }

                    for (int above = level + 1; above < levels; above++)
                    {
                        int cap = caps?[above] ?? threads;
                        if (host[above].Count > 0 && running[above] < cap)
                        {
                            violations.Enqueue($"round {round}: level {level} dequeued while level {above} had {host[above].Count} runnable");
                        }
                    }

                    running[level]++;
                }
            };

            var done = new CountdownEvent(1);
            using (var paused = new PauseAll(pool))
            {
                int count = 20 + random.Next(60);
                done.Reset(count);
                for (int id = 0; id < count; id++)
                {
                    int level = random.Next(levels);
                    lock (modelLock)
                    {
                        host[level].Enqueue(id);
                    }

                    pool.GetSynchronizationContext(level).Post(
                        _ =>
                        {
                            Thread.SpinWait(50);
                            done.Signal();
                        },
                        id);
                }

                Volatile.Write(ref tracking, true);
            }

            done.Wait(TestTimeout.Unexpected).Should().BeTrue("every item ran");
            violations.Should().BeEmpty();
            round++;
        }
    }

    /// <summary>Blocks every thread of the pool at its top level until disposed.</summary>
    private sealed class PauseAll : IDisposable
    {
        private readonly ManualResetEventSlim _release = new();

        public PauseAll(PriorityThreadPool pool)
        {
            var entered = new CountdownEvent(pool.ThreadCount); // not disposed: the last thread may still be inside Signal
            for (int i = 0; i < pool.ThreadCount; i++)
            {
                pool.GetSynchronizationContext(pool.Levels - 1).Post(
                    _ =>
                    {
                        entered.Signal();
                        _release.WaitOrFail("the pause to end");
                    },
                    "pause");
            }

            entered.Wait(TestTimeout.Unexpected).Should().BeTrue("every thread to enter the pause");
        }

        public void Dispose() => _release.Set();
    }
}
