using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace LeaseWorker.Core;

/// <summary>
/// PriorityAsync on several threads: a <see cref="PriorityThreadPool"/> with <paramref name="threadCount"/> threads and the levels
/// of <see cref="PriorityMode"/> (lease work 2, processing 1, receiving 0). Several messages' CPU parts run at once, one per thread;
/// a lease refresh that falls due goes to the first thread that finishes its part (or slice), ahead of every queued CPU part. Its
/// waits are the pool's own timers: it needs nothing from the .NET thread pool.
/// </summary>
/// <remarks>
/// <b>Renewal follows progress, with one case fewer than on one thread.</b> As in <see cref="PriorityMode"/>, the renewal loop does not
/// renew a message whose external call has not answered for the progress timeout, so a message hung asynchronously loses its lease.
/// A message hung synchronously (an endless CPU loop) holds one thread; the other threads still run its renewals, so, as with a
/// heartbeat thread, its lease is kept until every thread is held. A worker on several threads needs the progress stamp of CPU
/// work too (a checkpoint that stamps it) to catch that case; BrokerWorker's hang is the asynchronous one.
/// </remarks>
/// <param name="threadCount">The pool's threads: one per core for one worker (LeaseWorker), a worker process's share of the cores
/// (BrokerWorker). The CPU parts spin, so more threads than cores would only share the cores, and the operating system, not the
/// levels, would decide when a renewal runs.</param>
public sealed class PriorityThreadsMode(int threadCount) : Mode
{
    public const string ModeName = "priority-threads";

    public int ThreadCount => threadCount;

    public override string Name => ModeName;

    public override string RunsOn => $"PriorityThreadPool, {ThreadCount} threads, 3 levels";

    /// <summary>Each thread runs one CPU part at a time, sleeping or spinning.</summary>
    public override int? CpuThreads(CpuKind kind) => ThreadCount;

    public override bool RenewalFollowsProgress => true;

    /// <summary>Runs the worker on a pool of its own (BrokerWorker's hosted service runs it on the service's pool instead).</summary>
    public override void Run(Func<Task> worker)
    {
        using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = PriorityMode.Levels,
            ThreadCount = ThreadCount,
            Name = "lease-worker",
            StallTimeout = null, // a CPU part holds its thread for its whole length: that is the experiment, not a stall
        });
        pool.InvokeAsync(worker, PriorityMode.ReceivingLevel).GetAwaiter().GetResult();
    }

    /// <summary>Start concurrently: queue the rest at the back of the activity's level.</summary>
    public override Gate Begin(Activity activity) => Gate.From(Pool.Yield(PriorityMode.Level(activity)));

    /// <summary><c>await Prioritize(level)</c>: free when nothing more urgent waits, otherwise queued behind it.</summary>
    public override Gate MoveTo(Activity activity) => Gate.From(Priority.Prioritize(PriorityMode.Level(activity)));

    public override Gate Checkpoint(Activity activity) => Gate.From(Priority.Checkpoint());

    /// <summary>The pool's own timers, fired by its threads or its alarm, never the .NET thread pool's.</summary>
    public override TimeProvider Time => Pool.TimeProvider;

    private static PriorityThreadPool Pool =>
        PriorityThreadPool.Current ?? throw new InvalidOperationException("The priority-threads mode's worker runs on a PriorityThreadPool.");
}
