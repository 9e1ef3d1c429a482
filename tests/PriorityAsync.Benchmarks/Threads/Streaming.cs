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
            // Warm-up on the same thread, three bursts of the measured size: the producer's path, and the workers' queues grow to
            // the segments a burst of this size needs (a ConcurrentQueue reuses a drained segment but allocates each larger one once;
            // the single-threaded context measured 52 B/item in the first two bursts of 200,000 and 0 from the third on).
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
