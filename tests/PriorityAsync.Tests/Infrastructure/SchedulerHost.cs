using System.Collections.Concurrent;

namespace PriorityAsync.Tests.Infrastructure;

/// <summary>
/// One scheduler under test, whichever kind: a <see cref="PriorityContextThread"/> (one loop thread) or a <see cref="PriorityThreadPool"/>
/// with some threads. The contract suites are written once against this and run against every kind (as Channels' ChannelTestBase).
/// </summary>
public abstract class SchedulerHost : IAsyncDisposable
{
    public abstract IPriorityScheduler Scheduler { get; }

    /// <summary>1 for the loop; the thread count for a pool: run order equals dequeue order only when it is 1.</summary>
    public int Concurrency => Scheduler.MaximumConcurrency;

    public abstract Task Completion { get; }

    public static SchedulerHost Create(int threads, int levels, string name) =>
        threads == 0
            ? new LoopHost(new PriorityContextThread(new PriorityContextOptions { Levels = levels, Name = name }))
            : new PoolHost(new PriorityThreadPool(new PriorityThreadPoolOptions { Levels = levels, ThreadCount = threads, Name = name }));

    /// <summary>Whether the calling thread is one of the scheduler's (call it inside a callback).</summary>
    public abstract bool OwnsCurrentThread();

    public abstract void Complete();

    public abstract ValueTask DisposeAsync();

    /// <summary>Runs <paramref name="body"/> on the scheduler at <paramref name="level"/>.</summary>
    public Task<T> RunOn<T>(int level, Func<Task<T>> body) => Scheduler.GetTaskFactory(level).StartNew(body).Unwrap();

    public Task RunOn(int level, Action body) => Scheduler.GetTaskFactory(level).StartNew(body);

    /// <summary>Blocks every thread of the scheduler inside an item at the top level; disposing releases them. While paused, what is
    /// queued from other threads waits, so the order it is dequeued in is decided by the scheduler alone.</summary>
    public LoopHarness.Pause Pause()
    {
        var pause = new LoopHarness.Pause();
        // Not disposed: a thread may still be inside Signal when Wait returns here (the events hold no handle unless waited long).
        var entered = new CountdownEvent(Concurrency);
        SynchronizationContext top = Scheduler.GetSynchronizationContext(Scheduler.Levels - 1);
        for (int i = 0; i < Concurrency; i++)
        {
            top.Post(_ =>
            {
                entered.Signal();
                pause.Hold();
            }, null);
        }

        if (!entered.Wait(TestTimeout.Unexpected))
        {
            throw new TimeoutException("The scheduler's threads never all entered the pause.");
        }

        return pause;
    }

    /// <summary>Everything queued before has run: one marker per thread at level 0, all of them inside at once (strict priority and
    /// FIFO put every earlier item before the markers, and with every thread in a marker none of them is still running).</summary>
    public void Drain()
    {
        // Not disposed: a marker may still be inside Signal, or not yet inside Wait, when this returns (on a pool, it was: an
        // ObjectDisposedException on a worker thread). They hold no handle unless a wait blocks long; the GC takes them.
        var inside = new CountdownEvent(Concurrency);
        var all = new ManualResetEventSlim();
        SynchronizationContext bottom = Scheduler.GetSynchronizationContext(0);
        for (int i = 0; i < Concurrency; i++)
        {
            bottom.Post(_ =>
            {
                inside.Signal();
                all.WaitOrFail("every thread to reach the drain marker");
            }, null);
        }

        bool ok = inside.Wait(TestTimeout.Unexpected);
        all.Set();
        if (!ok)
        {
            throw new TimeoutException("The scheduler never drained.");
        }
    }

    private sealed class LoopHost(PriorityContextThread loop) : SchedulerHost
    {
        public override IPriorityScheduler Scheduler => loop.Context;

        public override Task Completion => loop.Completion;

        public override bool OwnsCurrentThread() => Environment.CurrentManagedThreadId == loop.ManagedThreadId;

        public override void Complete() => loop.Complete();

        public override ValueTask DisposeAsync() => loop.DisposeAsync();
    }

    private sealed class PoolHost(PriorityThreadPool pool) : SchedulerHost
    {
        public override IPriorityScheduler Scheduler => pool;

        public override Task Completion => pool.Completion;

        public override bool OwnsCurrentThread() => PriorityThreadPool.Current == pool && Internal.PoolWorker.Current?.Pool == pool;

        public override void Complete() => pool.Complete();

        public override ValueTask DisposeAsync() => pool.DisposeAsync();
    }
}
