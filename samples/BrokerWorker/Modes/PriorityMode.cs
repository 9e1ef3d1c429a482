using System;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace BrokerWorker.Modes;

/// <summary>
/// PriorityAsync, on the loop of a hosted <see cref="PriorityAsync.Hosting.PriorityBackgroundService"/>: one thread, three levels.
/// Lease work at 2 (highest), processing at 1, receiving at 0 (a new message only when nothing more urgent waits). The level is
/// carried across awaits; the waits are the loop's own timers, so nothing here needs the thread pool.
/// </summary>
/// <remarks>
/// <para><b>Renewal follows progress.</b> The renewal loop of a message runs at the top level on the same thread as the message's
/// processing, and before each renewal it checks the message's progress stamp: how long processing has been waiting for an external
/// call (an I/O part) that has not answered. The stamp starts when the call starts and stops when the call itself completes, not
/// when the loop resumes the message, so a message queued behind other messages' CPU work is never "stuck". If the stamp exceeds the
/// progress timeout (two leases by default; it must exceed the longest legitimate call), the loop does not renew: it cancels the
/// lease's token and lets the lease lapse, so another worker gets the message. Why this covers every way a message can hang:</para>
/// <list type="number">
/// <item>Asynchronously (a call that never answers): the loop is free, renewal runs on time at the top level, and the stamp shows the
/// call outstanding for longer than the timeout.</item>
/// <item>Synchronously (an endless CPU loop, a blocking call on the loop): renewal runs on the same thread, so it does not run at all,
/// and every lease of that worker lapses by itself.</item>
/// <item>Neither can happen to a worker that is merely busy: its renewals are never queued behind processing (top level; processing
/// yields at each checkpoint), and its messages waiting for the thread have no call outstanding.</item>
/// </list>
/// <para>A dedicated heartbeat thread (<see cref="HeartbeatThreadMode"/>) has neither property: it renews whether or not the
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

    public override bool RunsOnPriorityLoop => true;

    public override bool RenewalFollowsProgress => true;

    public override TimeProvider Time => Context.TimeProvider;

    /// <summary>Runs the worker on a loop of its own on the calling thread (the hosted service is the sample's way; on virtual time
    /// the loop runs on the run's clock and drives it).</summary>
    public override void Run(Func<Task> worker) =>
        PriorityContext.Run(worker, new PriorityContextOptions { Levels = Levels, Name = "broker-worker", TimeProvider = (TimeProvider?)Clock ?? TimeProvider.System });

    public override Gate Begin(Activity activity) => Gate.From(Context.Yield(Level(activity)));

    public override Gate MoveTo(Activity activity) => Gate.From(Priority.Prioritize(Level(activity)));

    public override Gate Checkpoint(Activity activity) => Gate.From(Priority.Prioritize(Level(activity)));

    public static int Level(Activity activity) => activity switch
    {
        Activity.Lease => LeaseLevel,
        Activity.Processing => ProcessingLevel,
        _ => ReceivingLevel,
    };

    private static PriorityContext Context =>
        PriorityContext.Current ?? throw new InvalidOperationException("The priority mode's worker runs on a priority loop.");
}
