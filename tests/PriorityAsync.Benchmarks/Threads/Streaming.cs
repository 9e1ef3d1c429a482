using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// Post from one producer thread + run, per item: the producer posts <c>items</c> callbacks as fast as it can (each increments a
/// shared counter with an interlocked add, whatever the workers); the figure is the wall time from the first post to the last
/// item's end, per item, the bytes allocated in the whole process (<see cref="GC.GetTotalAllocatedBytes(bool)"/>) per item, and how
/// often a post had to wake a parked worker thread (per 1,000 items, where the workers count it: the park/wake cost is in the time).
/// </summary>
internal static class Streaming
{
    public readonly record struct Result(double NsPerItem, double BytesPerItem, double WakesPer1000);

    public static Result Run(IWorkers workers, int items)
    {
        var counter = new Counter();
        SendOrPostCallback count = static s => ((Counter)s!).Hit();
        Result result = default;
        var producer = new Thread(() =>
        {
            // Warm-up on the same thread. First two bursts' worth queued while every worker thread is held, so the workers' queues
            // grow once to a segment that holds a whole burst (a ConcurrentQueue reuses its last, drained segment but allocates each
            // larger one, doubling: a held burst of 200,000 ends in a segment of 131,072 slots, and a free-running round whose queue
            // outgrew it allocated the next, 262,144 x 40 B = 52.4 B/item). Then three free-running bursts: the producer's path.
            HeldBurst(workers, count, counter, 2 * items);
            for (int burst = 0; burst < 3; burst++)
            {
                for (int i = 0; i < items; i++)
                {
                    workers.Post(false, count, counter);
                }

                counter.WaitFor(items);
                counter.Reset();
            }

            long wakes = workers.WakeCount;
            long bytes = GC.GetTotalAllocatedBytes(precise: true);
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < items; i++)
            {
                workers.Post(false, count, counter);
            }

            counter.WaitFor(items);
            double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds / items;
            result = new Result(ns, (GC.GetTotalAllocatedBytes(precise: true) - bytes) / (double)items, wakes < 0 ? double.NaN : (workers.WakeCount - wakes) * 1000.0 / items);
        })
        { Name = "streaming producer", IsBackground = true };
        producer.Start();
        producer.Join();
        return result;
    }

    private static void HeldBurst(IWorkers workers, SendOrPostCallback count, Counter counter, int items)
    {
        using var go = new ManualResetEventSlim(false);
        using var held = new CountdownEvent(workers.Threads);
        SendOrPostCallback blocker = _ =>
        {
            held.Signal();
            go.Wait();
        };
        for (int i = 0; i < workers.Threads; i++)
        {
            workers.Post(false, blocker, null);
        }

        if (!held.Wait(TimeSpan.FromSeconds(30)))
        {
            throw new TimeoutException($"{workers.Name}: only {workers.Threads - held.CurrentCount} of {workers.Threads} threads took a blocker within 30 s.");
        }

        for (int i = 0; i < items; i++)
        {
            workers.Post(false, count, counter);
        }

        go.Set();
        counter.WaitFor(items);
        counter.Reset();
    }

    private sealed class Counter
    {
        private readonly ManualResetEventSlim _done = new(false);
        private long _ran;
        private long _target = long.MaxValue;

        public void Hit()
        {
            if (Interlocked.Increment(ref _ran) == Volatile.Read(ref _target))
            {
                _done.Set();
            }
        }

        public void Reset()
        {
            Volatile.Write(ref _target, long.MaxValue);
            _done.Reset();
            Volatile.Write(ref _ran, 0);
        }

        public void WaitFor(long count)
        {
            Interlocked.Exchange(ref _target, count); // a full fence: the read of _ran below cannot move before it
            if (Volatile.Read(ref _ran) < count && !_done.Wait(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException($"{Volatile.Read(ref _ran)} of {count} items ran within 60 s.");
            }
        }
    }
}
