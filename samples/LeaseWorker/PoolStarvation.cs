using System;
using System.Diagnostics;
using System.Threading;

namespace LeaseWorker;

/// <summary>
/// <c>--starve-pool N</c>: what a careless library does at start-up, N thread-pool work items that block forever (as
/// <c>Task.Run(() => Thread.Sleep(-1))</c> would). Nothing tells the pool that its threads are blocked, so it gets them back only
/// by injecting new ones, at its starvation rate, when other work waits.
/// </summary>
public static class PoolStarvation
{
    private static readonly TimeSpan s_setupTimeout = TimeSpan.FromSeconds(30);
    private static int s_blocked;

    /// <summary>Pool threads blocked so far.</summary>
    public static int Blocked => Volatile.Read(ref s_blocked);

    /// <summary>
    /// Queues <paramref name="threads"/> items that block forever, and returns once those the pool can run now (up to its minimum
    /// number of threads) are blocked, so that the starvation is in effect before anything else runs. Call it once per process.
    /// </summary>
    public static void BlockForever(int threads)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(threads);
        for (int i = 0; i < threads; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(
                static _ =>
                {
                    Interlocked.Increment(ref s_blocked);
                    Thread.Sleep(Timeout.Infinite);
                },
                null);
        }

        ThreadPool.GetMinThreads(out int minimum, out _);
        int expected = Math.Min(threads, minimum);
        var waited = Stopwatch.StartNew();
        while (Blocked < expected)
        {
            if (waited.Elapsed > s_setupTimeout)
            {
                throw new TimeoutException($"Only {Blocked} of {expected} thread-pool threads were blocked after {s_setupTimeout.TotalSeconds} s.");
            }

            Thread.Sleep(1); // this thread is not a pool thread: polling it needs nothing from the pool
        }
    }
}
