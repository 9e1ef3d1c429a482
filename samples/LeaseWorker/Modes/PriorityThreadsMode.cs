using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace LeaseWorker;

/// <summary>
/// PriorityAsync on several threads: a <see cref="PriorityThreadPool"/> with one thread per core and the levels of
/// <see cref="PriorityMode"/> (lease work 2, processing 1, receiving 0). Several messages' CPU parts run at once, one per thread;
/// a lease refresh that falls due goes to the first thread that finishes its part, ahead of every queued CPU part. Its waits are the
/// pool's own timers: it needs nothing from the .NET thread pool. Not in the default run (<c>--modes</c> names it).
/// </summary>
public sealed class PriorityThreadsMode : Mode
{
    public const string ModeName = "priority-threads";

    /// <summary>One thread per core: the CPU parts spin, so more threads than cores would only share the cores.</summary>
    public static int ThreadCount => Environment.ProcessorCount;

    public override string Name => ModeName;

    public override string RunsOn => $"PriorityThreadPool, {ThreadCount} threads, 3 levels";

    /// <summary>Each thread runs one CPU part at a time, sleeping or spinning.</summary>
    public override int? CpuThreads(CpuKind kind) => ThreadCount;

    public override void Run(Func<Task> worker)
    {
        using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = 3,
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

    public override Gate Resumed(Activity activity) => Gate.Open;

    public override Gate Checkpoint(Activity activity) => Gate.From(Priority.Checkpoint());

    /// <summary>The pool's own timers, fired by its threads or its alarm, never the .NET thread pool's.</summary>
    public override TimeProvider Time => Pool.TimeProvider;

    private static PriorityThreadPool Pool =>
        PriorityThreadPool.Current ?? throw new InvalidOperationException("The priority-threads mode's worker runs on a PriorityThreadPool.");
}
