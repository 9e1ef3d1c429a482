using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace BrokerWorker.Modes;

/// <summary>
/// How a worker's continuations are scheduled. The worker's code (<see cref="Processing.MessageWorker"/>) is the same in every mode;
/// a mode decides what runs it and what each scheduling point (<c>await mode.MoveTo(...)</c>) does.
/// </summary>
public abstract class Mode
{
    /// <summary>The name on the command line and in the report.</summary>
    public abstract string Name { get; }

    /// <summary>How many threads of one worker process can run CPU work at once (for the CPU bound); null: as many as there are cores.</summary>
    public virtual int? CpuThreadsPerProcess => 1;

    /// <summary>Whether a hosted <see cref="PriorityAsync.Hosting.PriorityBackgroundService"/> runs the worker (its loop is the context).</summary>
    public virtual bool RunsOnPriorityLoop => false;

    /// <summary>Whether a hosted <see cref="PriorityAsync.Hosting.PriorityThreadPoolBackgroundService"/> runs the worker (its pool's threads).</summary>
    public virtual bool RunsOnPriorityThreadPool => false;

    /// <summary>Whether leases are renewed by a dedicated thread (<see cref="Heartbeat"/>) rather than by the worker's own code.</summary>
    public virtual bool RenewsOnDedicatedThread => false;

    /// <summary>
    /// Whether the worker's renewal loop renews a lease only while processing of its message makes progress (the priority mode: see
    /// <see cref="PriorityMode"/> for why this is sound there).
    /// </summary>
    public virtual bool RenewalFollowsProgress => false;

    /// <summary>The clock behind the worker's waits (renewal interval, simulated I/O): the system's, or the run's virtual clock.</summary>
    public virtual TimeProvider Time => (TimeProvider?)Clock ?? TimeProvider.System;

    /// <summary>
    /// With --virtual-time: the run's virtual clock, set before <see cref="Run"/>. The mode's loop drives it (it jumps the clock to its
    /// next timer when it has nothing to run), and each CPU part advances it. Null: real time.
    /// </summary>
    public VirtualTimeProvider? Clock { get; set; }

    /// <summary>Runs <paramref name="duration"/> of CPU work: calibrated spinning, or on virtual time a move of the clock (a simulated
    /// core: nothing else runs on the loop meanwhile, and the timers that came due fire after it, in due order).</summary>
    public void RunCpu(TimeSpan duration, double spinsPerMs)
    {
        if (Clock is { } clock)
        {
            clock.Advance(duration);
        }
        else
        {
            Processing.CpuWork.Run(duration, spinsPerMs);
        }
    }

    /// <summary>Runs the worker to completion on the calling thread (or on the threads the mode uses). The hosted priority modes run
    /// theirs on their service's loop or pool instead; on virtual time the coordinator runs the worker here.</summary>
    public abstract void Run(Func<Task> worker);

    /// <summary>At the start of a concurrent activity (queue the rest behind what is already waiting).</summary>
    public abstract Gate Begin(Activity activity);

    /// <summary>Before code of <paramref name="activity"/> that must wait for everything more urgent.</summary>
    public abstract Gate MoveTo(Activity activity);

    /// <summary>Between two slices of a CPU part (only with --checkpoint).</summary>
    public abstract Gate Checkpoint(Activity activity);

    public static Mode Create(string name, Options options) => name switch
    {
        "priority" => new PriorityMode(),
        "single" => new SingleThreadMode(),
        "threadpool" => new ThreadPoolMode(options),
        "heartbeat-thread" => new HeartbeatThreadMode(),
        PriorityThreadsMode.ModeName => new PriorityThreadsMode(options),
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, $"The modes are {string.Join(", ", Options.AllModes)}."),
    };
}
