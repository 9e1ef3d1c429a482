using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests;

/// <summary>Rule 2: strict priority between levels, FIFO within a level. Each test pauses the loop, queues a known mix, releases it
/// and compares the exact order (no timing involved).</summary>
public class PriorityContextOrderingTests
{
    [Fact]
    public async Task Post_MixedLevelsWhilePaused_RunsHighestLevelFirstAndFifoWithinLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 5 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        var rng = new Random(1234);
        var expected = new List<(int Level, int Seq)>();

        using (loop.Context.PauseLoop())
        {
            for (int i = 0; i < 200; i++)
            {
                int level = rng.Next(5);
                string name = $"{level}:{i}";
                expected.Add((level, i));
                loop.Context.GetSynchronizationContext(level).Post(_ => ran.Add(name), null);
            }
        }

        loop.Context.Drain();
        ran.Should().Equal(expected.OrderByDescending(e => e.Level).ThenBy(e => e.Seq).Select(e => $"{e.Level}:{e.Seq}"));
    }

    [Fact]
    public async Task Post_TwoProducersSameLevel_KeepsEachProducersOrder()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<(int Producer, int Seq)>();
        const int PerProducer = 20_000;

        using (loop.Context.PauseLoop())
        {
            Parallel.For(0, 2, producer =>
            {
                var sc = loop.Context.GetSynchronizationContext(0);
                for (int i = 0; i < PerProducer; i++)
                {
                    int seq = i;
                    sc.Post(_ => ran.Add((producer, seq)), null);
                }
            });
        }

        loop.Context.Drain();
        ran.Should().HaveCount(2 * PerProducer);
        foreach (var group in ran.GroupBy(r => r.Producer))
        {
            group.Select(r => r.Seq).Should().Equal(Enumerable.Range(0, PerProducer), $"producer {group.Key} posted in that order");
        }
    }

    [Fact]
    public async Task Post_FromLoopThreadDuringRun_HigherLevelOvertakesQueuedLowerWork()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        var sc0 = loop.Context.GetSynchronizationContext(0);
        var sc1 = loop.Context.GetSynchronizationContext(1);
        var sc2 = loop.Context.GetSynchronizationContext(2);

        using (loop.Context.PauseLoop())
        {
            sc1.Post(_ =>
            {
                ran.Add("1a");
                sc0.Post(_ => ran.Add("0 posted by 1a"), null);
                sc2.Post(_ => ran.Add("2 posted by 1a"), null);
                sc1.Post(_ => ran.Add("1 posted by 1a"), null);
            }, null);
            sc1.Post(_ => ran.Add("1b"), null);
            sc0.Post(_ => ran.Add("0a"), null);
        }

        // Twice: the first marker (level 0) may be posted before 1a runs and posts "0 posted by 1a" behind it; the second is posted
        // after the first ran, so after 1a, and comes behind everything 1a posted.
        loop.Context.Drain();
        loop.Context.Drain();
        ran.Should().Equal("1a", "2 posted by 1a", "1b", "1 posted by 1a", "0a", "0 posted by 1a");
    }

    [Fact]
    public async Task Post_LoopThreadAndOtherThreadSameLevel_RunInPostOrder()
    {
        // A post from the loop thread and one from another thread, both at level 0, in a known real-time order:
        // the level is one linearizable FIFO, so they run in that order.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        var sc0 = loop.Context.GetSynchronizationContext(0);

        using (loop.Context.PauseLoop())
        {
            sc0.Post(_ => ran.Add("other-1"), null);
            sc0.Post(_ =>
            {
                ran.Add("other-2");
                sc0.Post(_ => ran.Add("loop-1"), null);
            }, null);
        }

        loop.Context.Drain();
        sc0.Post(_ => ran.Add("other-3"), null);
        loop.Context.Drain();
        ran.Should().Equal("other-1", "other-2", "loop-1", "other-3");
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(63)]
    [InlineData(64)]
    public async Task Post_EveryLevelOfContext_RunsInStrictOrder(int levels)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = levels });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<int>();
        using (loop.Context.PauseLoop())
        {
            for (int level = 0; level < levels; level++)
            {
                int l = level;
                loop.Context.GetSynchronizationContext(level).Post(_ => ran.Add(l), null);
            }
        }

        loop.Context.Drain();
        ran.Should().Equal(Enumerable.Range(0, levels).Reverse());
    }
}
