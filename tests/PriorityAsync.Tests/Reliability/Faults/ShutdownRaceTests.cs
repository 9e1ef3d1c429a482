using System.Collections.Concurrent;
using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Reliability.Faults;

/// <summary>
/// Complete, Dispose, DisposeAsync or a fault while other threads Post, Send and <c>await context.Prioritize(level)</c>. Per round, checked by
/// accounting, not timing: every posted item ran exactly once or was dropped exactly once (never both, never neither); every Send
/// either returned after its callback ran once or threw <see cref="ObjectDisposedException"/> and its callback never ran; every
/// Prioritize either resumed on the loop thread or resumed elsewhere with <see cref="ObjectDisposedException"/>; the dropped count
/// equals the WorkDropped events; every wait is bounded.
/// </summary>
public sealed class ShutdownRaceTests(ITestOutputHelper output)
{
    [Fact]
    public void ShutdownWhilePostingSendingPrioritizing_FewRounds_NothingLostOrDoubled()
    {
        var totals = new Totals();
        for (int round = 0; round < 25; round++)
        {
            RunRound(seed: round, totals);
        }

        output.WriteLine(totals.ToString());
        totals.LateDropped.Should().BeGreaterThan(0, "late posts must have been exercised");
    }

    /// <summary>The same rounds for a share of the stress budget (see <see cref="ShutdownRaceStressTests"/>).</summary>
    internal static void StressRounds(ITestOutputHelper output)
    {
        var totals = new Totals();
        TimeSpan budget = StressSettings.Fraction(0.5);
        var stopwatch = Stopwatch.StartNew();
        int round = 0;
        // The budget, then on until both races were hit (a short budget on a quiet machine may miss them), up to ten budgets.
        while (stopwatch.Elapsed < budget || ((totals.LateDropped == 0 || totals.SendsRejected == 0) && stopwatch.Elapsed < budget * 10))
        {
            RunRound(seed: 10_000 + round, totals);
            round++;
        }

        output.WriteLine($"{round} rounds in {stopwatch.Elapsed.TotalSeconds:F1} s; {totals}");
        totals.LateDropped.Should().BeGreaterThan(0);
        totals.SendsRejected.Should().BeGreaterThan(0);
    }

    internal static void RunRound(int seed, Totals totals)
    {
        var random = new Random(seed);
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = $"race-{seed}", IdleSpinCount = random.Next(0, 30) });
        PriorityContext context = loop.Context;
        int dropEvents = 0;
        context.WorkDropped += (_, e) =>
        {
            Interlocked.Increment(ref dropEvents);
            if (e.State is RaceItem item)
            {
                item.MarkDropped();
            }
        };

        var items = new ConcurrentQueue<RaceItem>();
        var errors = new ConcurrentQueue<string>();
        int postsBeforeShutdown = random.Next(0, 2_000);
        int postedSoFar = 0;
        using var start = new ManualResetEventSlim(false);
        int shutdownKind = random.Next(4); // Complete, Dispose, DisposeAsync, or a fault (an unhandled exception stops the loop)
        var fault = new InvalidOperationException($"round {seed}: fault");
        long sendsRan = 0, sendsRejected = 0, prioritizedOnLoop = 0, prioritizedRejected = 0;

        var threads = new List<Thread>();
        for (int p = 0; p < 2; p++)
        {
            int posterSeed = random.Next();
            threads.Add(new Thread(() =>
            {
                var r = new Random(posterSeed);
                start.Wait();
                for (int i = 0; i < 3_000; i++)
                {
                    var item = new RaceItem();
                    items.Enqueue(item);
                    context.GetSynchronizationContext(r.Next(3)).Post(RaceItem.Callback, item); // never throws, even late
                    Interlocked.Increment(ref postedSoFar);
                }
            }));
        }

        threads.Add(new Thread(() =>
        {
            start.Wait();
            for (int i = 0; i < 200; i++)
            {
                var item = new RaceItem();
                try
                {
                    context.GetSynchronizationContext(i % 3).Send(RaceItem.Callback, item);
                    if (item.Ran != 1)
                    {
                        errors.Enqueue($"Send returned but its callback ran {item.Ran} times");
                    }

                    Interlocked.Increment(ref sendsRan);
                }
                catch (ObjectDisposedException)
                {
                    if (item.Ran != 0)
                    {
                        errors.Enqueue($"Send threw ObjectDisposedException but its callback ran {item.Ran} times");
                    }

                    Interlocked.Increment(ref sendsRejected);
                }
            }
        }));

        Task prioritizer = Task.Run(async () =>
        {
            start.Wait();
            for (int i = 0; i < 200; i++)
            {
                int level = i % 3;

                // Each attempt starts on a pool thread, so it always hops (never completes inline on the loop).
                await Task.Run(async () =>
                {
                    try
                    {
                        await context.Prioritize(level);
                        if (PriorityContext.Current != context || PriorityContext.CurrentLevel != level)
                        {
                            errors.Enqueue("Prioritize resumed outside the loop without an exception");
                        }

                        Interlocked.Increment(ref prioritizedOnLoop);
                    }
                    catch (ObjectDisposedException)
                    {
                        Interlocked.Increment(ref prioritizedRejected);
                    }
                }).ConfigureAwait(false);
            }
        });

        var stopper = new Thread(() =>
        {
            start.Wait();
            SpinWait.SpinUntil(() => Volatile.Read(ref postedSoFar) >= postsBeforeShutdown, TestTimeout.Unexpected);
            switch (shutdownKind)
            {
                case 0:
                    loop.Complete();
                    break;
                case 1:
                    loop.Dispose();
                    break;
                case 2:
                    loop.DisposeAsync().AsTask().Wait(TestTimeout.Unexpected);
                    break;
                default:
                    context.GetSynchronizationContext(2).Post(_ => throw fault, null);
                    break;
            }
        });
        threads.Add(stopper);

        foreach (Thread t in threads)
        {
            t.IsBackground = true;
            t.Start();
        }

        start.Set();
        foreach (Thread t in threads)
        {
            t.JoinOrFail($"round {seed}: {t.Name ?? "worker"}");
        }

        prioritizer.WithTimeout($"round {seed}: the prioritizer").GetAwaiter().GetResult();
        Exception? stopped = loop.Completion.WithTimeout($"round {seed}: the loop to stop").ContinueWith(t => t.Exception?.InnerException, TaskScheduler.Default).GetAwaiter().GetResult();
        if (shutdownKind == 3)
        {
            stopped.Should().BeSameAs(fault, $"round {seed}: the loop stops with the fault, unwrapped");
        }
        else
        {
            stopped.Should().BeNull($"round {seed}");
        }

        // Every Post above has returned, and a Post that drops raises WorkDropped before it returns: the accounting is final.
        errors.Should().BeEmpty($"round {seed}");
        int ran = 0, dropped = 0;
        foreach (RaceItem item in items)
        {
            (item.Ran + item.Dropped).Should().Be(1, $"round {seed}: every posted item runs exactly once or is dropped exactly once");
            ran += item.Ran;
            dropped += item.Dropped;
        }

        long droppedCount = context.GetSnapshot().DroppedCount;
        droppedCount.Should().Be(Volatile.Read(ref dropEvents), $"round {seed}: every drop is counted and reported");
        droppedCount.Should().BeGreaterThanOrEqualTo(dropped);
        (Volatile.Read(ref prioritizedOnLoop) + Volatile.Read(ref prioritizedRejected)).Should().Be(200, $"round {seed}: every Prioritize resumed once");
        context.State.Should().Be(shutdownKind == 3 ? PrioritySchedulerState.Faulted : PrioritySchedulerState.Completed);

        totals.Add(ran, dropped, sendsRan, sendsRejected, prioritizedOnLoop, prioritizedRejected);
    }

    private sealed class RaceItem
    {
        public static readonly SendOrPostCallback Callback = static state => Interlocked.Increment(ref ((RaceItem)state!)._ran);

        private int _ran;
        private int _dropped;

        public int Ran => Volatile.Read(ref _ran);

        public int Dropped => Volatile.Read(ref _dropped);

        public void MarkDropped() => Interlocked.Increment(ref _dropped);
    }

    internal sealed class Totals
    {
        private long _ran, _lateDropped, _sendsRan, _sendsRejected, _prioritizedOnLoop, _prioritizedRejected;

        public long LateDropped => _lateDropped;

        public long SendsRejected => _sendsRejected;

        public void Add(long ran, long dropped, long sendsRan, long sendsRejected, long prioritizedOnLoop, long prioritizedRejected)
        {
            _ran += ran;
            _lateDropped += dropped;
            _sendsRan += sendsRan;
            _sendsRejected += sendsRejected;
            _prioritizedOnLoop += prioritizedOnLoop;
            _prioritizedRejected += prioritizedRejected;
        }

        public override string ToString() =>
            $"posts ran {_ran:N0}, posts dropped {_lateDropped:N0}, sends ran {_sendsRan:N0}, sends rejected {_sendsRejected:N0}, " +
            $"prioritize on loop {_prioritizedOnLoop:N0}, prioritize rejected {_prioritizedRejected:N0}";
    }
}

[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class ShutdownRaceStressTests(ITestOutputHelper output)
{
    [Fact]
    public void ShutdownWhilePostingSendingPrioritizing_Stress_NothingLostOrDoubled() => ShutdownRaceTests.StressRounds(output);
}
