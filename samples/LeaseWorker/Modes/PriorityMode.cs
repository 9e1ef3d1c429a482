using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace LeaseWorker;

/// <summary>
/// PriorityAsync: one thread, three levels. Lease work at 2 (highest), processing at 1, receiving at 0 (lowest: the worker takes a
/// new message only when nothing more urgent waits). The level is carried across awaits, so there is nothing to do after I/O. Its
/// waits are the loop's own timers (<see cref="Time"/>): it needs nothing from the thread pool.
/// </summary>
public sealed class PriorityMode : Mode
{
    public const int LeaseLevel = 2;
    public const int ProcessingLevel = 1;
    public const int ReceivingLevel = 0;

    public override string Name => "priority";

    public override string RunsOn => "one thread, PriorityContext with 3 levels";

    public override int? CpuThreads(CpuKind kind) => 1;

    public override bool RunsOnVirtualTime => true;

    /// <summary>On virtual time the loop runs on the run's clock and drives it; its time quota is then off (it measures real time).</summary>
    public override void Run(Func<Task> worker) =>
        PriorityContext.Run(worker, new PriorityContextOptions { Levels = 3, Name = "lease-worker", TimeProvider = (TimeProvider?)Clock ?? TimeProvider.System });

    /// <summary>Start concurrently: queue the rest at the back of the activity's level (the seed's Task.Yield, with a level).</summary>
    public override Gate Begin(Activity activity) => Gate.From(Context.Yield(Level(activity)));

    /// <summary><c>await Prioritize(level)</c>: free when nothing more urgent waits, otherwise queued behind it.</summary>
    public override Gate MoveTo(Activity activity) => Gate.From(Priority.Prioritize(Level(activity)));

    public override Gate Resumed(Activity activity) => Gate.Open;

    /// <summary>
    /// <c>await Checkpoint()</c> at the activity's level (the worker is already there): free unless more urgent work waits, or the CPU
    /// part has used up the loop's time slice (<see cref="PriorityContextOptions.TimeSlice"/>, 20 ms by default) while other work
    /// waits; then the rest goes to the back of the level, so processing messages take turns instead of running each to its end.
    /// </summary>
    public override Gate Checkpoint(Activity activity) => Gate.From(Priority.Checkpoint());

    /// <summary>
    /// The loop's own timers: a delay armed at a level fires on the loop, at that level, without the thread pool. The refresh delay
    /// is a real timer; the step's I/O and the bus's replies stand for I/O (see the README for what that proves).
    /// </summary>
    public override TimeProvider Time => Context.TimeProvider;

    public static int Level(Activity activity) => activity switch
    {
        Activity.Lease => LeaseLevel,
        Activity.Processing => ProcessingLevel,
        _ => ReceivingLevel,
    };

    private static PriorityContext Context =>
        PriorityContext.Current ?? throw new InvalidOperationException("The priority mode's worker runs inside PriorityContext.Run.");
}
