using System;
using System.Threading.Tasks;
using Nito.AsyncEx;
using PriorityAsync;
using Samples.Support;

namespace LeaseWorker.Core;

/// <summary>
/// How the worker's continuations are scheduled. The worker's code is the same in every mode (LeaseWorker's <c>Worker</c>,
/// BrokerWorker's <c>MessageWorker</c>); a mode decides where it runs and what each of the worker's scheduling points does. A mode
/// object holds the state of one run.
/// </summary>
public abstract class Mode
{
    /// <summary>The name on the command line and in the report.</summary>
    public abstract string Name { get; }

    /// <summary>What runs the continuations, for the report.</summary>
    public abstract string RunsOn { get; }

    /// <summary>How many threads can run CPU work of this kind at once, for the lower bound; null when there is no limit.</summary>
    public virtual int? CpuThreads(CpuKind kind) => 1;

    /// <summary>Runs the worker to completion on the calling thread (or on the threads the mode uses) and returns when it is done.</summary>
    public abstract void Run(Func<Task> worker);

    /// <summary>At the start of a concurrent activity (the seed starts each method with <c>await Task.Yield()</c>).</summary>
    public abstract Gate Begin(Activity activity);

    /// <summary>Before code of <paramref name="activity"/> that must wait for everything more urgent.</summary>
    public abstract Gate MoveTo(Activity activity);

    /// <summary>After every I/O await (the seed calls its <c>Prioritize</c> after every await, since its context forgets); free
    /// unless the mode forgets the activity across an await.</summary>
    public virtual Gate Resumed(Activity activity) => Gate.Open;

    /// <summary>Between two slices of a CPU part (only with --checkpoint).</summary>
    public abstract Gate Checkpoint(Activity activity);

    /// <summary>Whether leases are renewed by a dedicated thread (BrokerWorker's heartbeat) rather than by the worker's own code.</summary>
    public virtual bool RenewsOnDedicatedThread => false;

    /// <summary>
    /// Whether the worker's renewal loop renews a lease only while processing of its message makes progress (the priority modes:
    /// see <see cref="PriorityMode"/> for why this is sound there).
    /// </summary>
    public virtual bool RenewalFollowsProgress => false;

    /// <summary>
    /// The clock behind the worker's waits: its refresh delay (a timer) and the simulated I/O (the bus's replies and each step's I/O
    /// part). Read on the worker's thread at each wait. By default the system's, whose timers fire on the thread pool; on virtual
    /// time the run's clock, whose timers fire on the thread that advances it (the loop, as it jumps or runs a CPU part).
    /// </summary>
    public virtual TimeProvider Time => (TimeProvider?)Clock ?? TimeProvider.System;

    /// <summary>
    /// With <c>--virtual-time</c>: the run's virtual clock, set before <see cref="Run"/>. The mode's loop drives it (it jumps the clock
    /// to its next timer when it has nothing to run), and each CPU part advances it. Null: real time.
    /// </summary>
    public VirtualTimeProvider? Clock { get; set; }

    /// <summary>Whether the mode can run on virtual time: only on one loop, which can tell when it has nothing to run.</summary>
    public virtual bool RunsOnVirtualTime => false;

    /// <summary>Runs <paramref name="duration"/> of CPU work of <paramref name="kind"/> on the calling thread, or on virtual time a
    /// move of the clock (a simulated core: nothing else runs on the loop meanwhile, and the timers that came due fire after it).</summary>
    public void RunCpu(CpuKind kind, TimeSpan duration)
    {
        if (Clock is { } clock)
        {
            clock.Advance(duration);
        }
        else
        {
            CpuWork.Run(kind, duration);
        }
    }

    /// <summary>What runs a FIFO baseline's continuations (<see cref="RunFifo"/>), for the report.</summary>
    protected string FifoRunsOn =>
        Clock is null ? "one thread, FIFO (Nito.AsyncEx AsyncContext)" : "one thread, FIFO (a one-level PriorityContext on the virtual clock)";

    /// <summary>
    /// Runs a FIFO baseline: on Nito.AsyncEx's <see cref="AsyncContext"/>, or on virtual time on a one-level <see cref="PriorityContext"/>:
    /// a first-in-first-out loop on one thread as AsyncContext is, and one that can drive the clock. Its waits are then the clock's own
    /// timers, which complete on the loop and post the awaiting code to the back of the queue, as a thread-pool timer posts to AsyncContext.
    /// </summary>
    protected void RunFifo(Func<Task> worker)
    {
        if (Clock is null)
        {
            AsyncContext.Run(worker);
        }
        else
        {
            PriorityContext.Run(worker, new PriorityContextOptions { Levels = 1, Name = Name, TimeProvider = Clock });
        }
    }
}
