using System;
using System.Diagnostics;
using System.Threading;

namespace Samples.Support;

/// <summary>
/// Blocks thread-pool threads the way careless code does: work items that block (a <c>.Result</c> on a slow call, a
/// <c>Thread.Sleep</c>, a lock held across I/O). Nothing here notifies the pool that a thread blocks, so it injects threads at its
/// starvation rate only. SocketCompletions starves the pool under its sockets; LeaseWorker's <c>--starve-pool N</c> floods it with N
/// items that it never releases.
/// </summary>
public sealed class PoolStarvation : IDisposable
{
    private static readonly TimeSpan s_setupTimeout = TimeSpan.FromSeconds(30);

    private readonly ManualResetEventSlim _release = new(initialState: false);
    private int _blocked;

    private PoolStarvation()
    {
    }

    /// <summary>The number of pool threads that are inside a blocking item now.</summary>
    public int Blocked => Volatile.Read(ref _blocked);

    /// <summary>
    /// Blocks as many pool threads as the pool has now (at least its minimum): forever, as a careless library at start-up
    /// would. The pool recovers only by injecting new threads.
    /// </summary>
    public static PoolStarvation BlockEveryThread()
    {
        ThreadPool.GetMinThreads(out int minimum, out _);
        int count = Math.Max(minimum, ThreadPool.ThreadCount);
        return Start(count, count);
    }

    /// <summary>
    /// Queues <paramref name="items"/> blocking items: every pool thread, including each one the pool injects, takes one and
    /// blocks until <see cref="Release"/>. Work queued to the pool after them waits for all of them.
    /// </summary>
    public static PoolStarvation Flood(int items)
    {
        ThreadPool.GetMinThreads(out int minimum, out _);
        return Start(items, Math.Min(items, minimum));
    }

    /// <summary>Lets every blocked item return (a flood then drains at once).</summary>
    public void Release() => _release.Set();

    public void Dispose() => Release();

    // Queues the items and returns once the first `blocked` of them have a thread each (those the pool can run at once).
    private static PoolStarvation Start(int items, int blocked)
    {
        var starvation = new PoolStarvation();
        for (int i = 0; i < items; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static s => s.Block(), starvation, preferLocal: false);
        }

        starvation.WaitUntilBlocked(blocked);
        return starvation;
    }

    private void Block()
    {
        Interlocked.Increment(ref _blocked);
        _release.Wait();
        Interlocked.Decrement(ref _blocked);
    }

    private void WaitUntilBlocked(int count)
    {
        // Polls from the calling (non-pool) thread: nothing here may need the pool.
        var stopwatch = Stopwatch.StartNew();
        while (Blocked < count)
        {
            if (stopwatch.Elapsed > s_setupTimeout)
            {
                throw new TimeoutException($"Only {Blocked} of {count} pool threads blocked after {s_setupTimeout.TotalSeconds} s.");
            }

            Thread.Sleep(1);
        }
    }
}
