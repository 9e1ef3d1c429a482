using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// Post from one producer thread + run, per item: the producer posts bursts of <c>items</c> callbacks as fast as it can (each
/// increments a shared counter with an interlocked add, whatever the workers) and waits for each burst's last item. The figure is
/// the median over <see cref="MeasuredBursts"/> bursts of the wall time from a burst's first post to its last item's end, per item;
/// the bytes allocated in the whole process (<see cref="GC.GetTotalAllocatedBytes(bool)"/>) per item over all of them; and how often a
/// post had to wake a parked worker thread (per 1,000 items, where the workers count it: the park/wake cost is in the time).
/// </summary>
/// <remarks>
/// Why a median of bursts: one burst is 5-20 ms, a few of the OS's scheduling quanta, and three threads (the producer and two
/// workers) share two cores, so a single burst measures whether the OS moved a thread during it as much as the scheduler; with one
/// burst per round, the single loop's own rounds ranged 22-206 ns per item in one run. A round's figure is the median of its bursts.
/// </remarks>
internal static class Streaming
{
    /// <summary>The bursts measured per round, after the warm-up; the round's figure is their median.</summary>
    public const int MeasuredBursts = 9;

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
            double[] nsPerItem = new double[MeasuredBursts]; // allocated before the first burst: not counted per item
            for (int burst = 0; burst < MeasuredBursts; burst++)
            {
                long start = Stopwatch.GetTimestamp();
                for (int i = 0; i < items; i++)
                {
                    workers.Post(false, count, counter);
                }

                counter.WaitFor(items);
                nsPerItem[burst] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / items;
                counter.Reset();
            }

            long measured = (long)items * MeasuredBursts;
            double allocated = (GC.GetTotalAllocatedBytes(precise: true) - bytes) / (double)measured;
            Array.Sort(nsPerItem);
            result = new Result(nsPerItem[MeasuredBursts / 2], allocated, wakes < 0 ? double.NaN : (workers.WakeCount - wakes) * 1000.0 / measured);
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
