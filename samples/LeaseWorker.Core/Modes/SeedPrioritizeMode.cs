using System;
using System.Threading.Tasks;
using Nito.AsyncEx;
using Samples.Support;

namespace LeaseWorker.Core;

/// <summary>
/// The seed's fix: its Guid-cookie <see cref="SeedPrioritizer.Prioritize"/> spin-yield protocol on the single FIFO thread
/// (Nito.AsyncEx's <see cref="AsyncContext"/>). Seed priorities: lease 3, processing 2,
/// receiving 1. Called after every await, as the seed does, because a FIFO context does not remember priorities.
/// </summary>
public sealed class SeedPrioritizeMode : Mode
{
    private readonly SeedPrioritizer _prioritizer = new();

    public override string Name => "seed-prioritize";

    public override string RunsOn => FifoRunsOn + " + the article's Prioritize, which puts continuations back in the queue until the most urgent one runs";

    public override bool RunsOnVirtualTime => true;

    /// <summary>Queue round trips spent inside the seed's Prioritize during the run.</summary>
    public long Laps => _prioritizer.Laps;

    public override void Run(Func<Task> worker) => RunFifo(worker);

    /// <summary>The seed's method prologue: <c>await Task.Yield(); await Prioritize(p);</c>.</summary>
    public override Gate Begin(Activity activity) => Gate.From(BeginAsync(SeedPriority(activity)));

    public override Gate MoveTo(Activity activity) => Gate.From(_prioritizer.Prioritize(SeedPriority(activity)));

    public override Gate Resumed(Activity activity) => Gate.From(_prioritizer.Prioritize(SeedPriority(activity)));

    public override Gate Checkpoint(Activity activity) => Gate.From(_prioritizer.Prioritize(SeedPriority(activity)));

    public static int SeedPriority(Activity activity) => activity switch
    {
        Activity.Lease => 3,
        Activity.Processing => 2,
        _ => 1,
    };

    private async Task BeginAsync(int priority)
    {
        await Task.Yield();
        await _prioritizer.Prioritize(priority);
    }
}
