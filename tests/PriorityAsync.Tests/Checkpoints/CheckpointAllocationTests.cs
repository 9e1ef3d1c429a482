using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Checkpoints;

/// <summary>Checkpoints allocate nothing: not when they complete at once, and not when they yield (beyond the state machine box, once).</summary>
public class CheckpointAllocationTests
{
    private const int Ops = 100_000;
    private const double BudgetBytesPerOp = 0.5;

    private static readonly SendOrPostCallback s_noop = static _ => { };

    [Fact]
    public async Task Checkpoint_NotYielding_AndShouldYield_AllocateNothing()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerOp = await loop.Context.RunOn(1, async () =>
        {
            await Checkpoints(1_000);
            long before = GC.GetAllocatedBytesForCurrentThread();
            int yields = await Checkpoints(Ops);
            long after = GC.GetAllocatedBytesForCurrentThread();
            yields.Should().Be(0, "nothing else is queued");
            return (after - before) / (2.0 * Ops);
        }).WithTimeout("the measurement");

        bytesPerOp.Should().BeLessThan(BudgetBytesPerOp);

        static async Task<int> Checkpoints(int n)
        {
            int yields = 0;
            for (int i = 0; i < n; i++)
            {
                await Checkpoint();
                if (ShouldYield)
                {
                    yields++;
                }
            }

            return yields;
        }
    }

    [Fact]
    public async Task Checkpoint_YieldingEveryTime_AllocatesOnlyTheStateMachineBoxOnce()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerOp = await loop.Context.RunOn(1, async () =>
        {
            PrioritySynchronizationContext above = loop.Context.GetSynchronizationContext(2);
            await Yielding(above, 1_000); // warm-up: the box, the queue segments
            long before = GC.GetAllocatedBytesForCurrentThread();
            await Yielding(above, Ops);
            return (GC.GetAllocatedBytesForCurrentThread() - before) / (double)Ops;
        }).WithTimeout("the measurement");

        bytesPerOp.Should().BeLessThan(2.0, "the box is allocated once per async method call, not per await");

        static async Task Yielding(PrioritySynchronizationContext above, int n)
        {
            for (int i = 0; i < n; i++)
            {
                above.Post(s_noop, null);
                await Checkpoint(); // yields behind the level-2 item every time
            }
        }
    }
}
