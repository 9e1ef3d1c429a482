using System;
using System.Collections.Concurrent;
using System.Threading;
using BenchmarkDotNet.Attributes;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// A context its host drives (<see cref="PriorityContext.AttachToCurrentThread"/>): a drain with nothing queued (what a frame loop pays
/// every frame when idle), and post + drain per item on the host's thread, without a budget and with one (a clock reading per item).
/// Baseline: Godot's model, a <see cref="ConcurrentQueue{T}"/> of callbacks drained first in first out.
/// </summary>
/// <remarks>The context is attached lazily on the thread that runs the benchmark's iterations (the host's thread), and posts come from
/// that thread between drains: the producer's path (fence, state check, the idle host's wake-up on the first post), as a frame's own
/// code posts.</remarks>
[BenchmarkCategory("HostDrain")]
[MemoryDiagnoser]
public class HostDrainBenchmarks
{
    public const int EmptyDrains = 1_000;
    public const int Items = 16_384;

    private static readonly SendOrPostCallback s_count = static state => ((HostDrainBenchmarks)state!)._ran++;

    private readonly ConcurrentQueue<(SendOrPostCallback Callback, object? State)> _fifo = new();
    private PriorityContextDriver? _driver;
    private long _ran;

    private PriorityContextDriver Driver
    {
        get
        {
            if (_driver is null || _driver.ManagedThreadId != Environment.CurrentManagedThreadId)
            {
                _driver = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3, Name = "bench", StallTimeout = null });
            }

            return _driver;
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        if (_driver is not null && _driver.ManagedThreadId == Environment.CurrentManagedThreadId)
        {
            _driver.Dispose();
        }
    }

    [Benchmark(OperationsPerInvoke = EmptyDrains, Description = "Drain(4 ms budget), nothing queued")]
    public int EmptyDrain_Budget()
    {
        PriorityContextDriver driver = Driver;
        int ran = 0;
        for (int i = 0; i < EmptyDrains; i++)
        {
            ran += driver.Drain(TimeSpan.FromMilliseconds(4), alwaysDrainFromLevel: 2).ItemsRun;
        }

        return ran;
    }

    [Benchmark(OperationsPerInvoke = EmptyDrains, Description = "Drain(), nothing queued")]
    public int EmptyDrain_NoBudget()
    {
        PriorityContextDriver driver = Driver;
        int ran = 0;
        for (int i = 0; i < EmptyDrains; i++)
        {
            ran += driver.Drain().ItemsRun;
        }

        return ran;
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "Post + Drain(), per item")]
    public int PostDrain_NoBudget()
    {
        PriorityContextDriver driver = Driver;
        Post(driver);
        return driver.Drain().ItemsRun;
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "Post + Drain(1 day budget), per item")]
    public int PostDrain_Budget()
    {
        PriorityContextDriver driver = Driver;
        Post(driver);
        return driver.Drain(PriorityContextDriver.MaxBudget, alwaysDrainFromLevel: 2).ItemsRun;
    }

    [Benchmark(OperationsPerInvoke = Items, Baseline = true, Description = "FIFO queue + drain (Godot's model), per item")]
    public long PostDrain_Fifo()
    {
        for (int i = 0; i < Items; i++)
        {
            _fifo.Enqueue((s_count, this));
        }

        while (_fifo.TryDequeue(out (SendOrPostCallback Callback, object? State) item))
        {
            item.Callback(item.State);
        }

        return _ran;
    }

    private void Post(PriorityContextDriver driver)
    {
        PriorityContext context = driver.Context;
        PrioritySynchronizationContext[] levels = [context.GetSynchronizationContext(0), context.GetSynchronizationContext(1), context.GetSynchronizationContext(2)];
        for (int i = 0; i < Items; i++)
        {
            levels[i % 3].Post(s_count, this);
        }
    }
}
