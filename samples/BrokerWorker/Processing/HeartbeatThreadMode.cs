using System;
using System.Threading.Tasks;
using LeaseWorker.Core;
using Nito.AsyncEx;
using Samples.Support;

namespace BrokerWorker.Processing;

/// <summary>
/// FIFO single-thread processing (as <see cref="SingleThreadMode"/>), with every lease renewed by one dedicated thread
/// (<see cref="Heartbeat"/>): what Prefect and agno did, and Kafka's consumer since KIP-62. Renewals never wait for the
/// processing thread, so CPU saturation costs no lease; but they do not know whether processing moves either.
/// </summary>
public sealed class HeartbeatThreadMode : Mode
{
    public override string Name => "heartbeat-thread";

    public override string RunsOn => "one thread, FIFO (Nito.AsyncEx AsyncContext), and a heartbeat thread that renews every lease";

    public override bool RenewsOnDedicatedThread => true;

    public override void Run(Func<Task> worker) => AsyncContext.Run(worker);

    public override Gate Begin(Activity activity) => Gate.Yield;

    public override Gate MoveTo(Activity activity) => Gate.Open;

    public override Gate Checkpoint(Activity activity) => Gate.Yield;
}
