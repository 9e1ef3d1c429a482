using System;
using System.Threading;
using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.ObjectPool;

namespace PriorityAsync.Benchmarks.Design;

/// <summary>
/// The measurement behind the ObjectPool decision in docs/design.md: a cross-thread Send needs a waiter (an event plus slots), once
/// per call. A thread-static free list (what the library does), <see cref="DefaultObjectPool{T}"/>, or a new one each time.
/// Run: <c>dotnet run -c Release --project tests/PriorityAsync.Benchmarks -- --design</c>.
/// </summary>
[MemoryDiagnoser]
public class SendWaiterPoolBenchmarks
{
    [ThreadStatic]
    private static Waiter? t_cached;

    private readonly DefaultObjectPool<Waiter> _pool = new(new WaiterPolicy());

    [Benchmark(Baseline = true, Description = "thread-static free list")]
    public object ThreadStatic()
    {
        Waiter waiter = t_cached ?? new Waiter();
        t_cached = null;
        waiter.Use(this);
        waiter.Reset();
        t_cached = waiter;
        return waiter;
    }

    [Benchmark(Description = "DefaultObjectPool Get + Return")]
    public object ObjectPool()
    {
        Waiter waiter = _pool.Get();
        waiter.Use(this);
        _pool.Return(waiter);
        return waiter;
    }

    [Benchmark(Description = "new per call")]
    public object Allocate()
    {
        var waiter = new Waiter();
        waiter.Use(this);
        return waiter;
    }

    /// <summary>The shape of the library's SendWaiter: an event and the callback's slots.</summary>
    public sealed class Waiter
    {
        private readonly ManualResetEventSlim _done = new(false, spinCount: 0);
        private object? _state;

        public void Use(object state)
        {
            _state = state;
            _done.Set();
        }

        public void Reset()
        {
            _state = null;
            _done.Reset();
        }
    }

    private sealed class WaiterPolicy : PooledObjectPolicy<Waiter>
    {
        public override Waiter Create() => new();

        public override bool Return(Waiter obj)
        {
            obj.Reset();
            return true;
        }
    }
}
