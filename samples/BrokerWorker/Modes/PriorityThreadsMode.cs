using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace BrokerWorker.Modes;

/// <summary>
/// PriorityAsync on several threads, on the pool of a hosted <see cref="PriorityAsync.Hosting.PriorityThreadPoolBackgroundService"/>:
/// a <see cref="PriorityThreadPool"/> with the worker's share of the cores (<see cref="Options.CoreShare"/>) and the levels of <see cref="PriorityMode"/> (lease work 2, processing 1,
/// receiving 0). Several messages' CPU parts run at once, one per thread, in one process; a renewal that falls due starts on the first
/// thread that finishes its CPU part (or slice), ahead of every queued CPU part. The waits are the pool's own timers.
/// </summary>
/// <remarks>
/// <b>Renewal follows progress, with one case fewer than on one thread.</b> As in <see cref="PriorityMode"/>, the renewal loop does not
/// renew a message whose external call has not answered for the progress timeout, so a message hung asynchronously loses its lease.
/// A message hung synchronously (an endless CPU loop) holds one thread; the other threads still run its renewals, so, as with a
/// heartbeat thread, its lease is kept until every thread is held. A worker on several threads needs the progress stamp of CPU
/// work too (a checkpoint that stamps it) to catch that case; this sample's hang is the asynchronous one.
/// </remarks>
public sealed class PriorityThreadsMode(Options options) : Mode
{
    public const string ModeName = "priority-threads";

    /// <summary>
    /// The worker's share of the cores (all of them for one worker): the CPU parts spin, so more threads than cores would only
    /// share the cores, and the operating system, not the levels, would decide when a renewal runs.
    /// </summary>
    public int ThreadCount => options.CoreShare;

    public override string Name => ModeName;

    public override int? CpuThreadsPerProcess => ThreadCount;

    public override bool RunsOnPriorityThreadPool => true;

    public override bool RenewalFollowsProgress => true;

    public override TimeProvider Time => Pool.TimeProvider;

    /// <summary>Runs the worker on a pool of its own (the hosted service is the sample's way; this serves a caller without a host).</summary>
    public override void Run(Func<Task> worker)
    {
        using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = PriorityMode.Levels,
            ThreadCount = ThreadCount,
            Name = "broker-worker",
            StallTimeout = null,
        });
        pool.InvokeAsync(worker, PriorityMode.ReceivingLevel).GetAwaiter().GetResult();
    }

    public override Gate Begin(Activity activity) => Gate.From(Pool.Yield(PriorityMode.Level(activity)));

    public override Gate MoveTo(Activity activity) => Gate.From(Priority.Prioritize(PriorityMode.Level(activity)));

    public override Gate Checkpoint(Activity activity) => Gate.From(Priority.Prioritize(PriorityMode.Level(activity)));

    private static PriorityThreadPool Pool =>
        PriorityThreadPool.Current ?? throw new InvalidOperationException("The priority-threads mode's worker runs on a PriorityThreadPool.");
}
