using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// The pool's idle protocols under races (ThreadPool/PriorityThreadPool.Engine.cs): a post that lands while threads spin or park is
/// never lost (P1 with P3: while a thread spins, a post wakes no parked thread), two items that must run at once both get a thread
/// (P2 behind P3), and items posted while the pool ends are each run once or dropped once (E-N), in both dispatch modes (D-N).
/// </summary>
/// <remarks>No timer is armed in these pools, so a parked thread waits without a timeout: a lost wake-up leaves an item unrun and the
/// test fails on its bounded wait instead of being rescued by a timer.</remarks>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class PoolWakeUpStressTests
{
    public static TheoryData<int, bool> Modes => new()
    {
        { 2, false }, // lock-free mode (strict, no cap)
        { 3, false },
        { 2, true }, // locked mode (a cap on level 0)
    };

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task Posts_AtRandomMomentsOfSpinningAndParking_EachRuns_AndPairsRunAtOnce(int threads, bool capped)
    {
        // Declared before the pool, so disposed after it (a pool thread may still be inside Signal or Wait while the pool ends).
        using var single = new ManualResetEventSlim();
        using var pair = new CountdownEvent(2);
        using var pairDone = new CountdownEvent(2);
        var pool = new PriorityThreadPool(Options(threads, capped, "wake-stress"));
        await using var disposePool = pool.BoundedDisposal();
        var random = new Random(threads * 10 + (capped ? 1 : 0));
        DateTime end = DateTime.UtcNow + StressSettings.Fraction(0.15);
        int posts = 0;
        await Task.Run(() =>
        {
            while (DateTime.UtcNow < end || posts < 2_000)
            {
                // Land the next post at a random moment of the threads' idle path: while one runs, spins, parks or is parked.
                switch (random.Next(5))
                {
                    case 0:
                        break;
                    case 1:
                        Thread.SpinWait(random.Next(1, 2_000));
                        break;
                    case 2:
                        Thread.Yield();
                        break;
                    case 3:
                        Thread.Sleep(0);
                        break;
                    default:
                        Thread.Sleep(1); // long enough for every thread to park
                        break;
                }

                if (random.Next(4) == 0)
                {
                    // Two items that wait for each other: both must hold a thread at once (work conservation, P2 behind P3).
                    pair.Reset();
                    pairDone.Reset();
                    for (int i = 0; i < 2; i++)
                    {
                        pool.GetSynchronizationContext(1).Post(_ =>
                        {
                            pair.Signal();
                            pair.WaitOrFail("the other item of the pair to start beside this one");
                            pairDone.Signal();
                        }, null);
                    }

                    pairDone.WaitOrFail($"a pair of items posted after {posts} posts to run at once");
                    posts += 2;
                }
                else
                {
                    single.Reset();
                    pool.GetSynchronizationContext(random.Next(2)).Post(_ => single.Set(), null);
                    single.WaitOrFail($"an item posted after {posts} posts to run (a lost wake-up leaves it queued)");
                    posts++;
                }
            }
        }).WhileProgressing(() => Volatile.Read(ref posts), "the producer"); // at least 2,000 posts, however long a loaded machine takes

        pool.GetSnapshot().RunPerLevel.Sum().Should().Be(posts, "every post ran once");
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task ItemsPostingItems_RacingTheEnd_AreEachRunOrDroppedExactlyOnce(int threads, bool capped)
    {
        DateTime end = DateTime.UtcNow + StressSettings.Fraction(0.15);
        int rounds = 0;
        while (DateTime.UtcNow < end || rounds < 10)
        {
            const int Producers = 2;
            const int PerProducer = 400;
            var pool = new PriorityThreadPool(Options(threads, capped, $"end-race-{rounds}"));
            var seen = new int[Producers * PerProducer * 2]; // per item: +1 per run, +1000 per drop
            pool.WorkDropped += (_, e) => Interlocked.Add(ref seen[(int)e.State!], 1000);
            using var go = new ManualResetEventSlim();
            SendOrPostCallback run = state => Interlocked.Increment(ref seen[(int)state!]);
            Task[] producers = Enumerable.Range(0, Producers).Select(p => Task.Run(() =>
            {
                go.Wait();
                for (int i = 0; i < PerProducer; i++)
                {
                    int id = (p * PerProducer + i) * 2;

                    // Each item posts a second one from a pool thread: the end must wait for the running item that posts it.
                    pool.GetSynchronizationContext(i % 2).Post(
                        state =>
                        {
                            run(state);
                            pool.GetSynchronizationContext(0).Post(run, (int)state! + 1);
                        },
                        id);
                }
            })).ToArray();
            go.Set();
            await pool.DisposeAsync().AsTask().WithTimeout("the pool to end");
            await Task.WhenAll(producers).WithTimeout("the producers");
            for (int id = 0; id < seen.Length; id += 2)
            {
                int first = Volatile.Read(ref seen[id]);
                first.Should().BeOneOf([1, 1000], $"round {rounds}: item {id} is run once or dropped once");
                if (first == 1)
                {
                    // It ran, so it posted its follower: on a pool thread before the end, so the follower ran (no late post).
                    Volatile.Read(ref seen[id + 1]).Should().Be(1, $"round {rounds}: the follower of item {id} was posted by a running item, before the end");
                }
                else
                {
                    Volatile.Read(ref seen[id + 1]).Should().Be(0, $"round {rounds}: a dropped item posts nothing");
                }
            }

            rounds++;
        }
    }

    private static PriorityThreadPoolOptions Options(int threads, bool capped, string name) => new()
    {
        ThreadCount = threads,
        Levels = 2,
        MaxConcurrencyPerLevel = capped ? [threads - 1, threads] : null,
        Name = name,
    };
}
