using System;
using System.Threading.Tasks;
using PriorityAsync.Baselines;

namespace LeaseWorker;

/// <summary>
/// One thread, first-in-first-out continuations: Nito.AsyncEx's <c>AsyncContext</c>, the seed's WinForms / asyncio emulation. The
/// registry copy holds no Nito.AsyncEx, so this runs <see cref="AsyncContextReplica"/> (samples/Baselines), the same design.
/// </summary>
public sealed class SingleThreadMode : Mode
{
    public override string Name => "single";

    public override string RunsOn => "one thread, FIFO (AsyncContextReplica, stand-in for Nito.AsyncEx AsyncContext)";

    public override int? CpuThreads(CpuKind kind) => 1;

    public override void Run(Func<Task> worker) => AsyncContextReplica.Run(worker);

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    public override Gate Resumed(Activity activity) => Gate.Open;

    /// <summary>All a FIFO context offers: go to the back of the one queue.</summary>
    public override Gate Checkpoint(Activity activity) => Gate.Yield;
}
