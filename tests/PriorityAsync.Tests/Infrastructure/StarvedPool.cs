using PriorityAsync.Tests.Timers;

namespace PriorityAsync.Tests.Infrastructure;

/// <summary>
/// Blocks every thread-pool thread until disposed: caps the pool at the threads it has (at least the minimum), so it cannot inject
/// more during the test (an injected thread would first take the runtime's timer work, which it queues at high priority), then queues
/// more blockers than threads, so every thread is blocked and blockers are left waiting in the queue. Tests that use it run in
/// <see cref="PoolStarvationCollection"/>, alone: a starved pool would break tests running beside them in this process.
/// </summary>
public sealed class StarvedPool : IDisposable
{
    private readonly ManualResetEventSlim _release = new(false);
    private readonly int _maxWorkers;
    private readonly int _maxIo;
    private int _blockersStarted;
    private int _blockersDone;
    private int _blockers;
    private bool _capped;

    public StarvedPool()
    {
        try
        {
            ThreadPool.GetMinThreads(out int minWorkers, out _);
            ThreadPool.GetMaxThreads(out _maxWorkers, out _maxIo);
            // Two above what it has: its threads may all be busy with the test runner's own blocking work (seen when a test runs
            // alone: three threads, none free), and the cap must leave the pool room to start at least one blocker.
            int cap = Math.Max(Math.Max(minWorkers, ThreadPool.ThreadCount), Environment.ProcessorCount) + 2;
            ThreadPool.SetMaxThreads(cap, _maxIo).Should().BeTrue($"the pool accepts a cap of {cap} worker threads (minimum {minWorkers})");
            _capped = true;
            _blockers = cap + 16;
            for (int i = 0; i < _blockers; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(
                    static state =>
                    {
                        var pool = (StarvedPool)state!;
                        Interlocked.Increment(ref pool._blockersStarted);
                        pool._release.Wait();
                        Interlocked.Increment(ref pool._blockersDone);
                    },
                    this);
            }

            // Every pool thread is busy once a blocker is left waiting in the queue; the cap stops the pool from adding threads. (A
            // pool thread busy with the test runner's own long-running work counts as blocked too while that work goes on; once it
            // ends, the thread takes the next item, and the runtime's timer work, queued at high priority, comes before the blockers.)
            TimerTestHelpers.WaitUntil(
                () => Volatile.Read(ref _blockersStarted) >= 1 && ThreadPool.PendingWorkItemCount > 0,
                $"every pool thread to be busy (cap {cap}, minimum {minWorkers}, threads {ThreadPool.ThreadCount}, blockers started {Volatile.Read(ref _blockersStarted)})");
            ThreadPool.ThreadCount.Should().BeLessThanOrEqualTo(cap);
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    /// <summary>Whether blockers still wait in the pool's queue (every pool thread is still blocked).</summary>
    public static bool IsStarved => ThreadPool.PendingWorkItemCount > 0;

    /// <summary>The number of blockers that ran once the pool was released (all of them, after <see cref="Dispose"/>).</summary>
    public int BlockersDone => Volatile.Read(ref _blockersDone);

    public int Blockers => _blockers;

    public void Dispose()
    {
        if (_capped)
        {
            ThreadPool.SetMaxThreads(_maxWorkers, _maxIo);
            _capped = false;
        }

        _release.Set();

        // Every blocker must be past _release.Wait() before the event could be collected: a blocker still queued would otherwise wait
        // on it after the test returned. Bounded, also when an assertion failed.
        SpinWait.SpinUntil(() => Volatile.Read(ref _blockersDone) == _blockers, TimeSpan.FromSeconds(60));
    }
}
