using System;
using System.Threading;
using System.Threading.Tasks;
using Samples.Support;

namespace BrokerWorker.Modes;

/// <summary>
/// The thread pool: every continuation, renewals included, runs on a pool thread, and CPU parts block pool threads. In the seed's
/// real-time run the pool injected threads (50+) as CPU parts blocked them and lost nothing. A time-compressed run gives the pool
/// no time to inject them, which would misstate the seed's result; so this mode first gives the pool, as its minimum, the threads
/// an uncompressed run ends up with: one per message in flight (each may block one in a CPU part) plus one per core for the
/// renewals and I/O completions. The report gives the peak thread count.
/// </summary>
public sealed class ThreadPoolMode(Options options) : Mode
{
    public override string Name => "threadpool";

    public override int? CpuThreadsPerProcess => null;

    /// <summary>The pool's minimum worker threads this mode sets.</summary>
    public int MinThreads => (options.Concurrency * (options.Bus == "memory" ? options.Workers : 1)) + Environment.ProcessorCount + 2;

    public override void Run(Func<Task> worker)
    {
        ThreadPool.GetMinThreads(out int workers, out int io);
        ThreadPool.SetMinThreads(Math.Max(workers, MinThreads), io);
        Task.Run(worker).GetAwaiter().GetResult();
    }

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    public override Gate Checkpoint(Activity activity) => Gate.Open;
}
