using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;

namespace PriorityAsync.Tests.Pool;

/// <summary>Posts that race the pool's end: each item is run once or dropped once, never both, never neither (E-N).</summary>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class PoolShutdownRaceTests
{
    [Fact]
    public async Task PostsRacingDispose_AreEachRunOrDroppedExactlyOnce()
    {
        DateTime end = DateTime.UtcNow + StressSettings.Fraction(0.3);
        int rounds = 0;
        while (DateTime.UtcNow < end || rounds < 20)
        {
            var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 3, Name = $"race-{rounds}" });
            int ran = 0;
            int dropped = 0;
            int posted = 0;
            pool.WorkDropped += (_, _) => Interlocked.Increment(ref dropped);
            using var go = new ManualResetEventSlim();
            Task[] producers = Enumerable.Range(0, 2).Select(p => Task.Run(() =>
            {
                go.Wait();
                for (int i = 0; i < 500; i++)
                {
                    pool.GetSynchronizationContext(i % 3).Post(_ => Interlocked.Increment(ref ran), null);
                    Interlocked.Increment(ref posted);
                }
            })).ToArray();
            go.Set();
            await pool.DisposeAsync().AsTask().WithTimeout("the pool to end");
            await Task.WhenAll(producers).WithTimeout("the producers");
            (Volatile.Read(ref ran) + Volatile.Read(ref dropped)).Should().Be(posted, $"round {rounds}: run once or dropped once");
            pool.GetSnapshot().DroppedCount.Should().Be(dropped);
            rounds++;
        }
    }
}
