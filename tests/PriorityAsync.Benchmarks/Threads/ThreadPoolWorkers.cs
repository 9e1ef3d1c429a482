using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// The .NET thread pool as users reach it: <c>Task.Run</c> per callback (a closure and a <see cref="Task"/> per item). No levels:
/// a high item queues behind everything posted before it. The pool keeps its default minimum of threads.
/// </summary>
internal sealed class ThreadPoolWorkers : IWorkers
{
    public string Name => "Task.Run (thread pool)";

    public int Threads => System.Environment.ProcessorCount;

    public void Post(bool high, SendOrPostCallback callback, object? state) => _ = Task.Run(() => callback(state));

    public void Dispose()
    {
    }
}
