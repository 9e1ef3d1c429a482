using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Timers;

/// <summary>
/// Timers armed, changed and disposed from several threads while the loop runs, and delays cancelled from other threads: no firing
/// is lost, none runs twice, and nothing stays armed.
/// </summary>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public class TimerStressTests
{
    [Fact]
    public async Task ArmChangeDispose_FromSeveralThreads_EveryFinalArmingFiresOnceAndNoneTwice()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var timers = new List<Entry>();
        long deadline = Stopwatch.GetTimestamp() + (long)(StressSettings.Fraction(0.4).TotalSeconds * Stopwatch.Frequency);
        const int Threads = 4;
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                var random = new Random(seed);
                var mine = new List<Entry>();
                while (Stopwatch.GetTimestamp() < deadline || mine.Count < 100)
                {
                    var entry = new Entry(random.Next(3));
                    entry.Timer = loop.Context.GetTimeProvider(entry.Level).CreateTimer(
                        static state => Interlocked.Increment(ref ((Entry)state!).Fired),
                        entry,
                        TimeSpan.FromMilliseconds(random.Next(4)),
                        Timeout.InfiniteTimeSpan);
                    entry.Armings = 1;
                    switch (random.Next(4))
                    {
                        case 0:
                            entry.Timer.Dispose();
                            entry.Disposed = true;
                            break;
                        case 1:
                            entry.Timer.Change(TimeSpan.FromMilliseconds(random.Next(4)), Timeout.InfiniteTimeSpan).Should().BeTrue();
                            entry.Armings++;
                            break;
                        case 2:
                            entry.Timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan).Should().BeTrue();
                            entry.Disarmed = true;
                            break;
                    }

                    mine.Add(entry);
                }

                lock (timers)
                {
                    timers.AddRange(mine);
                }
            })
            { IsBackground = true, Name = $"timer stress {t}" };
            threads[t].Start();
        }

        foreach (Thread thread in threads)
        {
            thread.JoinOrFail("a timer thread");
        }

        TimerTestHelpers.WaitUntil(() => loop.Context.ArmedTimerCount == 0, "every armed timer to fire");
        loop.Context.Drain();

        timers.Should().HaveCountGreaterThanOrEqualTo(Threads * 100);
        timers.Where(e => e.Fired > e.Armings).Should().BeEmpty("an arming fires at most once");
        timers.Where(e => !e.Disposed && !e.Disarmed && e.Fired == 0).Should().BeEmpty("a timer left armed always fires");
        loop.Context.GetSnapshot().DroppedCount.Should().Be(0);
    }

    [Fact]
    public async Task Delays_CancelledFromAnotherThread_EachCompletesExactlyOnce()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        int started = 0;
        int ranToEnd = 0;
        int canceled = 0;
        var sources = new System.Collections.Concurrent.ConcurrentQueue<CancellationTokenSource>();
        long deadline = Stopwatch.GetTimestamp() + (long)(StressSettings.Fraction(0.4).TotalSeconds * Stopwatch.Frequency);
        var stop = new CancellationTokenSource();
        var canceller = new Thread(() =>
        {
            var random = new Random(7);
            while (!stop.IsCancellationRequested)
            {
                if (sources.TryDequeue(out CancellationTokenSource? cts))
                {
                    if (random.Next(2) == 0)
                    {
                        cts.Cancel();
                    }
                }
                else
                {
                    Thread.Yield();
                }
            }
        })
        { IsBackground = true, Name = "canceller" };
        canceller.Start();

        Task body = loop.Context.RunOn(1, async () =>
        {
            var pending = new List<Task>();
            var random = new Random(3);
            while (Stopwatch.GetTimestamp() < deadline || started < 200)
            {
                var cts = new CancellationTokenSource();
                sources.Enqueue(cts);
                pending.Add(One(TimeSpan.FromMilliseconds(random.Next(3)), cts.Token));
                if (pending.Count == 50)
                {
                    await Task.WhenAll(pending);
                    pending.Clear();
                }
            }

            await Task.WhenAll(pending);
        });

        try
        {
            await body.WithinBudget("the delays");
        }
        finally
        {
            stop.Cancel();
            canceller.JoinOrFail("the canceller");
        }

        (ranToEnd + canceled).Should().Be(started, "every delay completes exactly once");
        loop.Context.ArmedTimerCount.Should().Be(0);

        async Task One(TimeSpan delay, CancellationToken token)
        {
            started++;
            try
            {
                await Delay(delay, token);
                ranToEnd++;
            }
            catch (OperationCanceledException)
            {
                canceled++;
            }
        }
    }

    private sealed class Entry(int level)
    {
        public int Level { get; } = level;

        public ITimer Timer { get; set; } = null!;

        public int Fired;

        public int Armings { get; set; }

        public bool Disposed { get; set; }

        public bool Disarmed { get; set; }
    }
}
