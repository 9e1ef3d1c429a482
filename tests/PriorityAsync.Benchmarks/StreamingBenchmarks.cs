using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Nito.AsyncEx;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Cross-thread streaming: 1 or 2 producer threads post <see cref="Items"/> callbacks in all (split evenly) to one consumer loop, which
/// runs them. PriorityAsync: <c>context.GetSynchronizationContext(level).Post</c> to a <see cref="PriorityContextThread"/>.
/// Baselines: a single-reader unbounded <see cref="Channel{T}"/> drained by an async loop on the thread pool, a
/// <see cref="BlockingCollection{T}"/> drained by a dedicated thread, and the AsyncContextThread's Post.
/// </summary>
/// <remarks>
/// Every consumer runs the same callback (a counter increment) for every item. The producers are long-lived threads. With two
/// producers, three threads share the machine's two cores, so that row measures contention as much as the queue.
/// </remarks>
[BenchmarkCategory("Streaming")]
public class StreamingBenchmarks
{
    public const int Items = 200_000;

    private static readonly SendOrPostCallback s_count = static state => ((StreamingBenchmarks)state!).OnItem();

    private readonly ManualResetEventSlim _done = new(false);
    private ProducerGang? _producers;
    private PriorityContextThread? _priorityThread;
    private AsyncContextThread? _asyncContextThread;
    private Channel<(SendOrPostCallback Callback, object? State)>? _channel;
    private BlockingCollection<(SendOrPostCallback Callback, object? State)>? _blocking;
    private Thread? _blockingConsumer;
    private Task? _channelConsumer;
    private long _ran;
    private long _target;

    [Params(1, 2)]
    public int Producers { get; set; }

    private int ItemsPerProducer => Items / Producers;

    [GlobalSetup]
    public void Setup()
    {
        _producers = new ProducerGang(2);
        _priorityThread = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench" });
        _asyncContextThread = new AsyncContextThread();
        _channel = Channel.CreateUnbounded<(SendOrPostCallback Callback, object? State)>(
            new UnboundedChannelOptions { SingleReader = true, SingleWriter = Producers == 1 });
        _channelConsumer = Task.Run(() => ConsumeChannel(_channel.Reader));
        _blocking = new BlockingCollection<(SendOrPostCallback Callback, object? State)>();
        _blockingConsumer = new Thread(ConsumeBlocking) { IsBackground = true, Name = "blocking consumer" };
        _blockingConsumer.Start();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _channel!.Writer.Complete();
        _channelConsumer!.GetAwaiter().GetResult();
        _blocking!.CompleteAdding();
        _blockingConsumer!.Join();
        _priorityThread!.Dispose();
        _asyncContextThread!.Dispose();
        _producers!.Dispose();
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "PriorityAsync: producers Post to one loop")]
    public void PriorityAsync_Post()
    {
        SynchronizationContext target = _priorityThread!.Context.GetSynchronizationContext(1);
        int count = ItemsPerProducer;
        Stream(producer =>
        {
            for (int i = 0; i < count; i++)
            {
                target.Post(s_count, this);
            }
        });
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Items, Description = "Channel<T> single reader (pool consumer)")]
    public void Channel_SingleReader()
    {
        ChannelWriter<(SendOrPostCallback Callback, object? State)> writer = _channel!.Writer;
        int count = ItemsPerProducer;
        Stream(producer =>
        {
            for (int i = 0; i < count; i++)
            {
                writer.TryWrite((s_count, this));
            }
        });
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "BlockingCollection<T> (dedicated consumer)")]
    public void BlockingCollection_Add()
    {
        BlockingCollection<(SendOrPostCallback Callback, object? State)> collection = _blocking!;
        int count = ItemsPerProducer;
        Stream(producer =>
        {
            for (int i = 0; i < count; i++)
            {
                collection.Add((s_count, this));
            }
        });
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "AsyncContextThread: producers Post")]
    public void AsyncContextThread_Post()
    {
        SynchronizationContext target = _asyncContextThread!.Context.SynchronizationContext;
        int count = ItemsPerProducer;
        Stream(producer =>
        {
            for (int i = 0; i < count; i++)
            {
                target.Post(s_count, this);
            }
        });
    }

    // Items in total, split between the producers: ns/op is the loop's wall time per item delivered, whatever the producer count.
    private void Stream(System.Action<int> produce)
    {
        _done.Reset();
        Volatile.Write(ref _ran, 0);
        Volatile.Write(ref _target, Items);
        _producers!.Run(Producers, produce);
        if (!_done.Wait(TimeSpan.FromSeconds(60)))
        {
            // Fail loudly rather than hang the run: a consumer that stopped (see docs/benchmarks.md, "Observations") never finishes.
            throw new TimeoutException($"The consumer ran {Volatile.Read(ref _ran)} of {Items} items within 60 s; it has stopped.");
        }
    }

    private void OnItem()
    {
        // Only the consumer writes _ran, so no interlocked operation is needed (one consumer per benchmark).
        long ran = _ran + 1;
        Volatile.Write(ref _ran, ran);
        if (ran == Volatile.Read(ref _target))
        {
            _done.Set();
        }
    }

    private static async Task ConsumeChannel(ChannelReader<(SendOrPostCallback Callback, object? State)> reader)
    {
        while (await reader.WaitToReadAsync().ConfigureAwait(false))
        {
            while (reader.TryRead(out (SendOrPostCallback Callback, object? State) item))
            {
                item.Callback(item.State);
            }
        }
    }

    private void ConsumeBlocking()
    {
        foreach ((SendOrPostCallback callback, object? state) in _blocking!.GetConsumingEnumerable())
        {
            callback(state);
        }
    }
}
