using System;
using System.Threading.Tasks;
using Nito.AsyncEx;
using Samples.Support;

namespace BrokerWorker.Modes;

/// <summary>
/// One FIFO thread (Nito.AsyncEx's <see cref="AsyncContext"/>), no priorities: a renewal's continuation waits in the queue behind
/// every CPU part queued before it. The seed's failing worker.
/// </summary>
public sealed class SingleThreadMode : Mode
{
    public override string Name => "single";

    public override void Run(Func<Task> worker) => AsyncContext.Run(worker);

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    public override Gate Checkpoint(Activity activity) => Gate.Yield;
}
