using System;
using System.Threading.Tasks;
using PriorityAsync;

namespace BrokerWorker.Modes;

/// <summary>
/// PriorityAsync, on the loop of a hosted <see cref="PriorityAsync.Hosting.PriorityBackgroundService"/>: one thread, three levels.
/// Lease work at 2 (highest), processing at 1, receiving at 0 (a new message only when nothing more urgent waits). The level is
/// carried across awaits; the waits are the loop's own timers, so nothing here needs the thread pool.
/// </summary>
/// <remarks>
/// <para><b>Renewal follows progress.</b> The renewal loop of a message runs at the top level on the same thread as the message's
/// processing, and before each renewal it checks the message's progress stamp (set by processing after every CPU slice and every
/// I/O part). If the stamp is older than the progress timeout, it does not renew: it cancels the lease's token and lets the lease
/// lapse, so another worker gets the message. This is sound here, and only here, for two reasons:</para>
/// <list type="number">
/// <item>Renewal never waits behind processing (it is at the top level; processing yields at each checkpoint), so a stale stamp
/// cannot be the renewal's own lateness: the stamp is stale because the message's processing did not advance.</item>
/// <item>If the loop itself is stuck (a CPU-bound endless loop, a blocking call), the renewal does not run at all: the lease lapses
/// by itself. So a stuck worker loses its leases whether it is stuck asynchronously (caught by the stamp) or synchronously (caught
/// by the single thread), and a live worker keeps every lease.</item>
/// </list>
/// <para>A dedicated heartbeat thread (<see cref="HeartbeatThreadMode"/>) has neither property: it renews whether or not the
/// processing thread moves, so a hung message keeps its lease forever (a zombie). It can be given the same stamp check (Kafka's
/// <c>max.poll.interval.ms</c> is that check, added with the heartbeat thread in KIP-62), but then the stamp's timeout must cover the
/// processing thread's whole FIFO backlog, not one slice.</para>
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

    public override void Run(Func<Task> worker) =>
        PriorityContext.Run(worker, new PriorityContextOptions { Levels = Levels, Name = "broker-worker" });

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
