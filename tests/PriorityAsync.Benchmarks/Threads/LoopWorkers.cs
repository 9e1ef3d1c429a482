using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>The single-threaded context for reference: a <see cref="PriorityContextThread"/> with two levels (high = 1).</summary>
internal sealed class LoopWorkers : IWorkers
{
    private readonly PriorityContextThread _thread = new(new PriorityContextOptions { Levels = 2, Name = "threads-bench" });
    private readonly SynchronizationContext _low;
    private readonly SynchronizationContext _high;

    public LoopWorkers()
    {
        _low = _thread.Context.GetSynchronizationContext(0);
        _high = _thread.Context.GetSynchronizationContext(1);
    }

    public string Name => "PriorityContextThread (1 thread)";

    public int Threads => 1;

    public void Post(bool high, SendOrPostCallback callback, object? state) => (high ? _high : _low).Post(callback, state);

    public long WakeCount => _thread.Context.WakeCount;

    public void Dispose() => _thread.Dispose();
}
