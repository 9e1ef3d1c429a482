using System;
using System.Threading.Tasks;
using Nito.AsyncEx;
using Samples.Support;

namespace LeaseWorker.Core;

/// <summary>
/// One thread, first-in-first-out continuations: Nito.AsyncEx's <see cref="AsyncContext"/> (package Nito.AsyncEx.Context 5.1.2),
/// the seed's WinForms / asyncio emulation, and its failing worker: a refresh's continuation waits in the queue behind every CPU part
/// queued before it.
/// </summary>
public sealed class SingleThreadMode : Mode
{
    public override string Name => "single";

    public override string RunsOn => FifoRunsOn;

    public override bool RunsOnVirtualTime => true;

    public override void Run(Func<Task> worker) => RunFifo(worker);

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    /// <summary>All a FIFO context offers: go to the back of the one queue.</summary>
    public override Gate Checkpoint(Activity activity) => Gate.Yield;
}
