using System;
using System.Collections.Concurrent;
using System.Threading;
using BenchmarkDotNet.Attributes;
using Nito.AsyncEx;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Post + drain of <see cref="Items"/> callbacks from the loop thread: the loop posts a batch to itself and runs it. Baselines: a raw
/// <see cref="ConcurrentQueue{T}"/> enqueue+dequeue+invoke on one thread (the floor), the AsyncContext (Nito.AsyncEx.Context 5.1.2)'s Post, and
/// <see cref="ThreadPool.UnsafeQueueUserWorkItem(IThreadPoolWorkItem, bool)"/>.
/// </summary>
/// <remarks>
/// The loops are long-lived (<see cref="PriorityContextThread"/>, <see cref="AsyncContextThread"/>), so their queues are warm
/// and steady-state allocation shows. Each invocation hands the batch to the loop thread and waits for its last item: one
/// cross-thread wake-up (~10-50 us) per invocation, about 1-3 ns per item at this batch size, charged to the contexts only.
/// </remarks>
[BenchmarkCategory("PostDrain")]
public class PostDrainBenchmarks
{
    public const int Items = 16_384;

    private static readonly SendOrPostCallback s_count = static state => ((PostDrainBenchmarks)state!)._ran++;

    private static readonly SendOrPostCallback s_done = static state => ((PostDrainBenchmarks)state!)._done.Set();

    private static readonly SendOrPostCallback s_postBatch = static state =>
    {
        var self = (PostDrainBenchmarks)state!;
        SynchronizationContext target = SynchronizationContext.Current!;
        for (int i = 0; i < Items; i++)
        {
            target.Post(s_count, self);
        }

        target.Post(s_done, self); // FIFO: runs after the batch
    };

    private readonly ManualResetEventSlim _done = new(false);
    private readonly ConcurrentQueue<(SendOrPostCallback Callback, object? State)> _rawQueue = new();
    private readonly CountingWorkItem _poolItem = new();
    private PriorityContextThread? _priorityThread;
    private AsyncContextThread? _asyncContextThread;
    private long _ran;

    [GlobalSetup]
    public void Setup()
    {
        _priorityThread = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench" });
        _asyncContextThread = new AsyncContextThread();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _priorityThread?.Dispose();
        _asyncContextThread?.Dispose();
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "PriorityAsync: Post+drain from the loop thread")]
    public void PriorityAsync_PostDrain() => RunBatchOn(_priorityThread!.Context.GetSynchronizationContext(0));

    [Benchmark(OperationsPerInvoke = Items, Description = "Raw ConcurrentQueue enqueue+dequeue+invoke")]
    public long ConcurrentQueue_EnqueueDequeue()
    {
        ConcurrentQueue<(SendOrPostCallback Callback, object? State)> queue = _rawQueue;
        for (int i = 0; i < Items; i++)
        {
            queue.Enqueue((s_count, this));
        }

        while (queue.TryDequeue(out (SendOrPostCallback Callback, object? State) item))
        {
            item.Callback(item.State);
        }

        return _ran;
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Items, Description = "AsyncContext: Post+drain from the loop thread")]
    public void AsyncContext_PostDrain() => RunBatchOn(_asyncContextThread!.Context.SynchronizationContext);

    [Benchmark(OperationsPerInvoke = Items, Description = "ThreadPool.UnsafeQueueUserWorkItem (IThreadPoolWorkItem)")]
    public void ThreadPool_UnsafeQueueUserWorkItem()
    {
        CountingWorkItem item = _poolItem;
        item.Reset(Items);
        for (int i = 0; i < Items; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);
        }

        item.Wait();
    }

    private void RunBatchOn(SynchronizationContext context)
    {
        _done.Reset();
        context.Post(s_postBatch, this);
        if (!_done.Wait(TimeSpan.FromSeconds(60)))
        {
            throw new TimeoutException($"The loop did not run the batch within 60 s; it has stopped.");
        }
    }

    /// <summary>One cached work item queued many times: the pool's cheapest, allocation-free path.</summary>
    private sealed class CountingWorkItem : IThreadPoolWorkItem
    {
        private readonly ManualResetEventSlim _done = new(false);
        private int _remaining;

        public void Reset(int count)
        {
            _done.Reset();
            Volatile.Write(ref _remaining, count);
        }

        public void Wait() => _done.Wait();

        public void Execute()
        {
            if (Interlocked.Decrement(ref _remaining) == 0)
            {
                _done.Set();
            }
        }
    }
}
