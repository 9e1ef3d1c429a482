using System;
using System.Threading.Tasks;
using Samples.Support;

namespace LeaseWorker;

/// <summary>Plain async on the default thread pool, as the seed's first runs: no context, continuations run on any pool thread.</summary>
public sealed class ThreadPoolMode : Mode
{
    public override string Name => "threadpool";

    public override string RunsOn => "the .NET thread pool";

    /// <summary>Sleeping needs no core, so the pool can run as many as it has threads; spinning is limited by the cores.</summary>
    public override int? CpuThreads(CpuKind kind) => kind == CpuKind.Spin ? Environment.ProcessorCount : null;

    public override void Run(Func<Task> worker) => Task.Run(worker).GetAwaiter().GetResult();

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    public override Gate Resumed(Activity activity) => Gate.Open;

    /// <summary>The OS preempts threads; nothing to do.</summary>
    public override Gate Checkpoint(Activity activity) => Gate.Open;
}
