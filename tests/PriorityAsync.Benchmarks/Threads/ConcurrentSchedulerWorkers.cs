using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// <see cref="ConcurrentExclusiveSchedulerPair.ConcurrentScheduler"/> capped at <paramref name="threads"/> callbacks at once, over the
/// thread pool: the framework's own concurrency cap, with no levels. One <see cref="Task"/> per item (<c>StartNew</c> with state).
/// </summary>
internal sealed class ConcurrentSchedulerWorkers(int threads) : IWorkers
{
    private static readonly System.Action<object?> s_invoke = static boxed =>
    {
        var (callback, state) = ((SendOrPostCallback, object?))boxed!;
        callback(state);
    };

    private readonly ConcurrentExclusiveSchedulerPair _pair = new(TaskScheduler.Default, threads);

    public string Name => "ConcurrentExclusiveSchedulerPair.ConcurrentScheduler";

    public int Threads => threads;

    public void Post(bool high, SendOrPostCallback callback, object? state) =>
        _ = Task.Factory.StartNew(s_invoke, (callback, state), CancellationToken.None, TaskCreationOptions.DenyChildAttach, _pair.ConcurrentScheduler);

    public void Dispose() => _pair.Complete();
}
