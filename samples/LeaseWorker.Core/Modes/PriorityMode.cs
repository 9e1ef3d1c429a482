using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace LeaseWorker.Core;

/// <summary>
/// PriorityAsync: one thread, three levels. Lease work at 2 (highest), processing at 1, receiving at 0 (lowest: the worker takes a
/// new message only when nothing more urgent waits). The level is carried across awaits, so there is nothing to do after I/O. Its
/// waits are the loop's own timers (<see cref="Time"/>): it needs nothing from the thread pool.
/// </summary>
/// <remarks>
/// <para><b>Renewal follows progress</b> (BrokerWorker). The renewal loop of a message runs at the top level on the same thread as
/// the message's processing, and before each renewal it checks the message's progress stamp: how long processing has been waiting
/// for an external call (an I/O part) that has not answered. The stamp starts when the call starts and stops when the call itself
/// completes, not when the loop resumes the message, so a message queued behind other messages' CPU work is never "stuck". If the
/// stamp exceeds the progress timeout (two leases by default; it must exceed the longest legitimate call), the loop does not renew:
/// it cancels the lease's token and lets the lease lapse, so another worker gets the message. Why this covers every way a message
/// can hang:</para>
/// <list type="number">
/// <item>Asynchronously (a call that never answers): the loop is free, renewal runs on time at the top level, and the stamp shows the
/// call outstanding for longer than the timeout.</item>
/// <item>Synchronously (an endless CPU loop, a blocking call on the loop): renewal runs on the same thread, so it does not run at all,
/// and every lease of that worker lapses by itself.</item>
/// <item>Neither can happen to a worker that is merely busy: its renewals are never queued behind processing (top level; processing
/// yields at each checkpoint), and its messages waiting for the thread have no call outstanding.</item>
/// </list>
/// <para>A dedicated heartbeat thread (BrokerWorker's heartbeat-thread mode) has neither property: it renews whether or not the
/// processing thread moves, so a hung message keeps its lease forever (a zombie). It can be given the same stamp check (Kafka's
/// <c>max.poll.interval.ms</c> is that check, added with the heartbeat thread in KIP-62), but a heartbeat thread alone cannot see the
/// second case: a processing thread stuck in a synchronous loop keeps its leases as long as the heartbeat thread lives.</para>
/// </remarks>
public sealed class PriorityMode : Mode
{
    public const int Levels = 3;
    public const int LeaseLevel = 2;
    public const int ProcessingLevel = 1;
    public const int ReceivingLevel = 0;

    public override string Name => "priority";

    public override string RunsOn => "one thread, PriorityContext with 3 levels";

    public override bool RunsOnVirtualTime => true;

    public override bool RenewalFollowsProgress => true;

    /// <summary>Runs the worker on a loop of its own on the calling thread (BrokerWorker's hosted service runs it on the service's
    /// loop instead). On virtual time the loop runs on the run's clock and drives it; its time quota is then off (it measures real
    /// time).</summary>
    public override void Run(Func<Task> worker) =>
        PriorityContext.Run(worker, new PriorityContextOptions { Levels = Levels, Name = "lease-worker", TimeProvider = (TimeProvider?)Clock ?? TimeProvider.System });

    /// <summary>Start concurrently: queue the rest at the back of the activity's level (the seed's Task.Yield, with a level).</summary>
    public override Gate Begin(Activity activity) => Gate.From(Context.Yield(Level(activity)));

    /// <summary><c>await Prioritize(level)</c>: free when nothing more urgent waits, otherwise queued behind it.</summary>
    public override Gate MoveTo(Activity activity) => Gate.From(Priority.Prioritize(Level(activity)));

    /// <summary>
    /// <c>await Checkpoint()</c> at the activity's level (the worker is already there): free unless more urgent work waits, or the CPU
    /// part has used up the loop's time slice (<see cref="PriorityContextOptions.TimeSlice"/>, 20 ms by default) while other work
    /// waits; then the rest goes to the back of the level, so processing messages take turns instead of running each to its end.
    /// </summary>
    public override Gate Checkpoint(Activity activity) => Gate.From(Priority.Checkpoint());

    /// <summary>
    /// The loop's own timers: a delay armed at a level fires on the loop, at that level, without the thread pool. The refresh delay
    /// is a real timer; the step's I/O and the bus's replies stand for I/O (see LeaseWorker's README for what that proves).
    /// </summary>
    public override TimeProvider Time => Context.TimeProvider;

    public static int Level(Activity activity) => activity switch
    {
        Activity.Lease => LeaseLevel,
        Activity.Processing => ProcessingLevel,
        _ => ReceivingLevel,
    };

    private static PriorityContext Context =>
        PriorityContext.Current ?? throw new InvalidOperationException("The priority mode's worker runs on a priority loop (PriorityContext).");
}
