using System;
using System.Threading;
using System.Threading.Tasks;
using Samples.Support;

namespace LeaseWorker.Core;

/// <summary>Plain async on the default thread pool, as the seed's first runs: no context, continuations run on any pool thread.</summary>
/// <param name="minThreads">
/// The pool's minimum worker threads to set first, or null to leave the pool as it is (LeaseWorker: its README shows what the
/// pool's injection does at compressed time). In the seed's real-time run the pool injected threads (50+) as CPU parts blocked
/// them and lost nothing; a time-compressed run gives it no time to inject them, so BrokerWorker gives it, as its minimum, the
/// threads an uncompressed run ends up with: one per message in flight plus one per core for the renewals and I/O completions.
/// </param>
public sealed class ThreadPoolMode(int? minThreads = null) : Mode
{
    public override string Name => "threadpool";

    public override string RunsOn => "the .NET thread pool";

    /// <summary>The pool's minimum worker threads this mode sets; null: the pool's own.</summary>
    public int? MinThreads => minThreads;

    /// <summary>Sleeping needs no core, so the pool can run as many as it has threads; spinning is limited by the cores.</summary>
    public override int? CpuThreads(CpuKind kind) => kind == CpuKind.Spin ? Environment.ProcessorCount : null;

    public override void Run(Func<Task> worker)
    {
        if (minThreads is { } min)
        {
            ThreadPool.GetMinThreads(out int workers, out int io);
            ThreadPool.SetMinThreads(Math.Max(workers, min), io);
        }

        Task.Run(worker).GetAwaiter().GetResult();
    }

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    /// <summary>The OS preempts threads; nothing to do.</summary>
    public override Gate Checkpoint(Activity activity) => Gate.Open;
}
