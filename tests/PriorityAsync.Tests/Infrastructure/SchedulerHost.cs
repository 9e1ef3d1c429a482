using System.Collections.Concurrent;

namespace PriorityAsync.Tests.Infrastructure;

/// <summary>
/// One scheduler under test, whichever kind: a <see cref="PriorityContextThread"/> (one loop thread) or a <see cref="PriorityThreadPool"/>
/// with some threads, optionally with caps per level or another policy (the pool's locked mode). The contract suites are written once
/// against this and run against every kind (as Channels' ChannelTestBase).
/// </summary>
public abstract class SchedulerHost : IAsyncDisposable
{
    public abstract PriorityScheduler Scheduler { get; }

    /// <summary>1 for the loop; the thread count for a pool: run order equals dequeue order only when it is 1.</summary>
    public int Concurrency => Scheduler.MaximumConcurrency;

    /// <summary>Whether items run in the order strict priority and FIFO give: one thread and the strict policy. Otherwise the suites
    /// assert exactly once (the pool's dequeue order and the policies have tests of their own).</summary>
    public bool RunOrderIsStrictOrder => Concurrency == 1 && Policy == PriorityPolicy.Strict;

    public PriorityPolicy Policy => Scheduler.Policy;

    public Task Completion => Scheduler.Completion;

    /// <summary>Creates a loop (<paramref name="threads"/> 0) or a pool; <paramref name="caps"/> and <paramref name="policy"/> are the
    /// pool's <see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/> and <see cref="PrioritySchedulerOptions.Policy"/>.</summary>
    public static SchedulerHost Create(int threads, int levels, string name, IReadOnlyList<int>? caps = null, PriorityPolicy? policy = null) =>
        threads == 0
            ? new LoopHost(new PriorityContextThread(new PriorityContextOptions { Levels = levels, Name = name }))
            : new PoolHost(new PriorityThreadPool(new PriorityThreadPoolOptions
            {
                Levels = levels,
                ThreadCount = threads,
                Name = name,
                MaxConcurrencyPerLevel = caps,
                Policy = policy ?? PriorityPolicy.Strict,
            }));

    /// <summary>The most threads <paramref name="level"/> may use at once: the pool's cap, or 1 on the loop.</summary>
    public int MaxConcurrency(int level) => Scheduler.GetScheduler(level).MaximumConcurrencyLevel;

    /// <summary>Whether the calling thread is one of the scheduler's (call it inside a callback).</summary>
    public bool OwnsCurrentThread() => Scheduler.IsOnOwnThread;

    public abstract void Complete();

    public abstract ValueTask DisposeAsync();

    /// <summary>Runs <paramref name="body"/> on the scheduler at <paramref name="level"/>.</summary>
    public Task<T> RunOn<T>(int level, Func<Task<T>> body) => Scheduler.GetTaskFactory(level).StartNew(body).Unwrap();

    public Task RunOn(int level, Action body) => Scheduler.GetTaskFactory(level).StartNew(body);

    /// <summary>Blocks every thread of the scheduler inside an item at the highest level every thread may run at (the top level unless
    /// it is capped); disposing releases them. While paused, what is queued from other threads waits, so the order it is dequeued in is
    /// decided by the scheduler alone.</summary>
    public LoopHarness.Pause Pause() =>
        HoldEveryThread(Scheduler, Enumerable.Range(0, Scheduler.Levels).Last(l => MaxConcurrency(l) == Concurrency), "the pause");

    /// <summary>
    /// Everything queued before has run: one marker per thread at the lowest level every thread may run at, all of them inside at once,
    /// and nothing queued meanwhile. With every thread in a marker nothing else runs, and with nothing queued every earlier item has
    /// run. Under strict priority with level 0 uncapped the first round always finds the queues empty (every earlier item is dequeued
    /// before the markers); a cap or another policy may let the markers overtake queued work: then the markers end, the queues are
    /// waited empty, and the round is repeated.
    /// </summary>
    public void Drain()
    {
        int level = Enumerable.Range(0, Scheduler.Levels).First(l => MaxConcurrency(l) == Concurrency);
        DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (true)
        {
            bool empty;
            using (HoldEveryThread(Scheduler, level, "the drain markers"))
            {
                empty = Scheduler.GetSnapshot().TotalPending == 0;
            }

            if (empty)
            {
                return;
            }

            while (Scheduler.GetSnapshot().TotalPending != 0)
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new TimeoutException("The scheduler never drained: work stayed queued.");
                }

                Thread.Sleep(1);
            }
        }
    }

    /// <summary>Posts one item per thread of <paramref name="scheduler"/> at <paramref name="level"/> that holds its thread until the
    /// result is disposed, and returns once every thread is inside one (bounded: throws naming <paramref name="what"/>).</summary>
    public static LoopHarness.Pause HoldEveryThread(PriorityScheduler scheduler, int level, string what)
    {
        var pause = new LoopHarness.Pause();

        // Not disposed: a thread may still be inside Signal when Wait returns here (on a pool, it was: an ObjectDisposedException on a
        // worker thread). It holds no handle unless a wait blocks long; the GC takes it.
        var entered = new CountdownEvent(scheduler.MaximumConcurrency);
        SynchronizationContext sc = scheduler.GetSynchronizationContext(level);
        for (int i = 0; i < scheduler.MaximumConcurrency; i++)
        {
            sc.Post(_ =>
            {
                entered.Signal();
                pause.Hold();
            }, null);
        }

        if (!entered.Wait(TestTimeout.Unexpected))
        {
            pause.Dispose();
            throw new TimeoutException($"The scheduler's threads never all entered {what} ({entered.CurrentCount} of {entered.InitialCount} missing).");
        }

        return pause;
    }

    private sealed class LoopHost(PriorityContextThread loop) : SchedulerHost
    {
        public override PriorityScheduler Scheduler => loop.Context;

        public override void Complete() => loop.Complete();

        public override ValueTask DisposeAsync() => loop.DisposeAsync();
    }

    private sealed class PoolHost(PriorityThreadPool pool) : SchedulerHost
    {
        public override PriorityScheduler Scheduler => pool;

        public override void Complete() => pool.Complete();

        public override ValueTask DisposeAsync() => pool.DisposeAsync();
    }
}
