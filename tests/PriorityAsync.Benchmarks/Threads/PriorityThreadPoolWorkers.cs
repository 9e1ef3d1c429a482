using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>The priority scheduler of issue 20: a <see cref="PriorityThreadPool"/> of <paramref name="threads"/> threads, two levels (high = 1).</summary>
internal sealed class PriorityThreadPoolWorkers(int threads) : IWorkers
{
    private readonly PriorityThreadPool _pool = new(new PriorityThreadPoolOptions { Levels = 2, ThreadCount = threads, Name = "threads-bench" });

    public string Name => $"PriorityThreadPool ({threads} thread{(threads == 1 ? "" : "s")})";

    public int Threads => threads;

    public void Post(bool high, SendOrPostCallback callback, object? state) => _pool.GetSynchronizationContext(high ? 1 : 0).Post(callback, state);

    public long WakeCount => _pool.WakeCount;

    public void Dispose() => _pool.Dispose();
}
