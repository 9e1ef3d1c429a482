using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Tests.Timers.TimerTestHelpers;

namespace PriorityAsync.Tests.Timers;

/// <summary>Starving the pool would break tests running at the same time in this process: these run alone.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class PoolStarvationCollection
{
    public const string Name = "Pool starvation";
}

/// <summary>
/// The loop's timers do not depend on the thread pool: with every pool thread blocked, loop timers fire on the loop, in due order,
/// while a plain <see cref="Task.Delay(TimeSpan)"/> (the runtime's timer queue, completed through the pool) is still waiting.
/// </summary>
[Collection(PoolStarvationCollection.Name)]
public class PoolStarvationTests
{
    [Fact]
    public void LoopTimers_WithThePoolStarved_FireOnTheLoopInOrderWhileAPlainTaskDelayWaits()
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "starved" });
        using var release = new ManualResetEventSlim(false);
        var log = new Log();
        using var allFired = new ManualResetEventSlim(false);
        Task? plainDelay = null;
        bool plainDelayDoneWhenLoopTimersFired = true;
        int blockersStarted = 0;
        int blockersDone = 0;
        int blockers = 0;
        int maxWorkers = 0;
        int maxIo = 0;
        bool capped = false;
        try
        {
            // Block every pool thread: cap the pool at the threads it has (at least the minimum), so it cannot inject more during the
            // test (an injected thread would first take the runtime's timer work, which it queues at high priority), then queue more
            // blockers than threads, so every thread is blocked and blockers are left waiting in the queue.
            ThreadPool.GetMinThreads(out int minWorkers, out int minIo);
            ThreadPool.GetMaxThreads(out maxWorkers, out maxIo);
            // Two above what it has: its threads may all be busy with the test runner's own blocking work (seen when this test runs
            // alone: three threads, none free), and the cap must leave the pool room to start at least one blocker.
            int cap = Math.Max(Math.Max(minWorkers, ThreadPool.ThreadCount), Environment.ProcessorCount) + 2;
            ThreadPool.SetMaxThreads(cap, maxIo).Should().BeTrue($"the pool accepts a cap of {cap} worker threads (minimum {minWorkers})");
            capped = true;
            blockers = cap + 16;
            for (int i = 0; i < blockers; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(
                    _ =>
                    {
                        Interlocked.Increment(ref blockersStarted);
                        release.Wait();
                        Interlocked.Increment(ref blockersDone);
                    },
                    null);
            }

            // Every pool thread is busy once a blocker is left waiting in the queue; the cap stops the pool from adding threads. (A
            // pool thread busy with the test runner's own long-running work counts as blocked too: it takes no timer work either.)
            WaitUntil(
                () => Volatile.Read(ref blockersStarted) >= 1 && ThreadPool.PendingWorkItemCount > 0,
                $"every pool thread to be busy (cap {cap}, minimum {minWorkers}, threads {ThreadPool.ThreadCount}, blockers started {Volatile.Read(ref blockersStarted)})");
            ThreadPool.ThreadCount.Should().BeLessThanOrEqualTo(cap);

            // A plain delay, due first: its completion needs a pool thread.
            plainDelay = Task.Delay(TimeSpan.FromMilliseconds(1));

            // Loop timers at three levels, due after it, created from this (non-loop) thread with explicit levels. Due order and
            // priority agree, so the run order is the same whether the loop finds them due one by one or several at once.
            (int Level, int Ms, string Name)[] plan = [(2, 10, "a"), (2, 20, "b"), (1, 30, "c"), (0, 40, "d")];
            foreach (var (level, ms, name) in plan)
            {
                loop.Context.GetTimeProvider(level).CreateTimer(
                    _ =>
                    {
                        log.Add($"{name}:{PriorityContext.CurrentLevel}:{Environment.CurrentManagedThreadId == loop.ManagedThreadId}");
                        if (log.Entries.Length == plan.Length)
                        {
                            plainDelayDoneWhenLoopTimersFired = plainDelay.IsCompleted;
                            allFired.Set();
                        }
                    },
                    null,
                    TimeSpan.FromMilliseconds(ms),
                    Timeout.InfiniteTimeSpan);
            }

            allFired.WaitOrFail("the loop timers, with the pool starved");
            bool poolStillStarved = ThreadPool.PendingWorkItemCount > 0;

            log.Entries.Should().Equal("a:2:True", "b:2:True", "c:1:True", "d:0:True");
            poolStillStarved.Should().BeTrue("the test is only meaningful while blockers still wait in the pool's queue");
            plainDelayDoneWhenLoopTimersFired.Should().BeFalse("the plain Task.Delay, due first, still waits for a pool thread");
        }
        finally
        {
            if (capped)
            {
                ThreadPool.SetMaxThreads(maxWorkers, maxIo);
            }

            release.Set();

            // Every blocker must be past release.Wait() before `release` is disposed, also when an assertion above failed: a blocker
            // still queued would otherwise call Wait on a disposed event after this method returned, an unhandled
            // ObjectDisposedException on a pool thread that ends the test host.
            SpinWait.SpinUntil(() => Volatile.Read(ref blockersDone) == blockers, TimeSpan.FromSeconds(60));
        }

        WaitUntil(() => plainDelay!.IsCompleted, "the plain delay to complete once the pool is released");
        Volatile.Read(ref blockersDone).Should().Be(blockers, "every blocker ran once the pool was released");
    }
}
