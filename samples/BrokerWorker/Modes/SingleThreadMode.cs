using System;
using System.Threading.Tasks;
using Nito.AsyncEx;
using PriorityAsync;
using Samples.Support;

namespace BrokerWorker.Modes;

/// <summary>
/// One FIFO thread (Nito.AsyncEx's <see cref="AsyncContext"/>), no priorities: a renewal's continuation waits in the queue behind
/// every CPU part queued before it. The seed's failing worker.
/// </summary>
public sealed class SingleThreadMode : Mode
{
    public override string Name => "single";

    /// <summary>
    /// Nito.AsyncEx's <see cref="AsyncContext"/>; on virtual time a one-level <see cref="PriorityContext"/> instead: first in first out
    /// on one thread as AsyncContext is, and able to drive the clock. Its waits are the clock's own timers, which post the awaiting
    /// code to the back of the queue as a thread-pool timer posts to AsyncContext.
    /// </summary>
    public override void Run(Func<Task> worker)
    {
        if (Clock is null)
        {
            AsyncContext.Run(worker);
        }
        else
        {
            PriorityContext.Run(worker, new PriorityContextOptions { Levels = 1, Name = "broker-worker-single", TimeProvider = Clock });
        }
    }

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    public override Gate Checkpoint(Activity activity) => Gate.Yield;
}
