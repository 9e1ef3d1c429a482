using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// CPU-bound items of about 10 us (<see cref="CpuItem"/>), all queued before the run starts: throughput in items per second.
/// </summary>
/// <remarks>
/// To queue everything before anything runs, the run first occupies every thread of the workers with a blocker that waits for the
/// start signal (a <see cref="CountdownEvent"/> says they all run), then queues the items behind them, then releases the blockers:
/// the clock runs from the release to the last item's end. The thread pool may own more threads than <see cref="IWorkers.Threads"/>
/// (it injects threads when its workers block); items that ran before the start are counted and left out of the rate.
/// </remarks>
internal static class CpuThroughput
{
    public readonly record struct Result(double ItemsPerSecond, int RanBeforeStart);

    public static Result Run(IWorkers workers, int items)
    {
        int iterations = CpuItem.Iterations;
        var state = new State(iterations);
        SendOrPostCallback item = static s => ((State)s!).RunItem();

        // Warm-up: the callbacks, the workers' threads and their queues.
        for (int i = 0; i < 200; i++)
        {
            workers.Post(false, item, state);
        }

        state.WaitFor(200);
        state.Reset();

        using var go = new ManualResetEventSlim(false);
        using var blocked = new CountdownEvent(workers.Threads);
        SendOrPostCallback blocker = _ =>
        {
            blocked.Signal();
            go.Wait();
        };
        for (int i = 0; i < workers.Threads; i++)
        {
            workers.Post(false, blocker, null);
        }

        if (!blocked.Wait(TimeSpan.FromSeconds(30)))
        {
            throw new TimeoutException($"{workers.Name}: only {workers.Threads - blocked.CurrentCount} of {workers.Threads} threads took a blocker within 30 s.");
        }

        for (int i = 0; i < items; i++)
        {
            workers.Post(false, item, state);
        }

        int ranBefore = (int)Volatile.Read(ref state.Ran);
        long start = Stopwatch.GetTimestamp();
        go.Set();
        state.WaitFor(items);
        double seconds = (Volatile.Read(ref state.LastEnd) - start) / (double)Stopwatch.Frequency;
        return new Result((items - ranBefore) / seconds, ranBefore);
    }

    private sealed class State(int iterations)
    {
        public long Ran;
        public long LastEnd;
        private readonly ManualResetEventSlim _done = new(false);
        private long _target = long.MaxValue;

        public void RunItem()
        {
            CpuItem.Work(iterations);
            if (Interlocked.Increment(ref Ran) == Volatile.Read(ref _target))
            {
                Volatile.Write(ref LastEnd, Stopwatch.GetTimestamp());
                _done.Set();
            }
        }

        public void Reset()
        {
            Volatile.Write(ref _target, long.MaxValue); // no stale target from the warm-up: the run's WaitFor sets its own
            _done.Reset();
            Volatile.Write(ref Ran, 0);
        }

        public void WaitFor(long count)
        {
            Interlocked.Exchange(ref _target, count); // a full fence: the read of Ran below cannot move before it (else a last item and this wait could miss each other)
            if (Volatile.Read(ref Ran) >= count)
            {
                return;
            }

            if (!_done.Wait(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException($"{Volatile.Read(ref Ran)} of {count} items ran within 60 s.");
            }
        }
    }
}
