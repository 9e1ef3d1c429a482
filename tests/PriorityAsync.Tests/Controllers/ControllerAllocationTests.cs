using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Controllers;

/// <summary>
/// Posting under a controller and running its items allocates nothing in steady state (measured as in <see cref="AllocationTests"/>):
/// the controller's FIFO is a <see cref="Queue{T}"/> of struct items that keeps its array once it has held the peak backlog, and its
/// activation is one object reused while the level does not change.
/// </summary>
public sealed class ControllerAllocationTests
{
    private const int Items = 100_000;
    private const double BudgetBytesPerItem = 2.0;

    private static readonly SendOrPostCallback s_noop = static _ => { };

    [Fact]
    public async Task PostAndRun_UnderAController_OnTheLoopThread_AllocatesNothingPerItem()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityTaskController controller = loop.Context.CreateController(1);
        double bytesPerItem = await loop.Context.RunOn(0, async () =>
        {
            for (int warm = 0; warm < 3; warm++)
            {
                await PostAndDrain(controller); // warm-up: the controller's queue grows to the peak backlog
            }

            long before = GC.GetAllocatedBytesForCurrentThread();
            await PostAndDrain(controller);
            long after = GC.GetAllocatedBytesForCurrentThread();
            return (after - before) / (double)Items;
        }).WithTimeout("the measurement");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem, "posting under a controller and running its items allocate nothing per item");

        static async Task PostAndDrain(PriorityTaskController controller)
        {
            for (int i = 0; i < Items; i++)
            {
                controller.Post(s_noop, null);
            }

            await Yield(); // at level 0: runs after the controller (level 1) has run every item
            controller.PendingCount.Should().Be(0);
        }
    }

    [Fact]
    public async Task Post_UnderAController_FromAnotherThread_AllocatesNothingPerItemOnTheProducer()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityTaskController controller = loop.Context.CreateController(1);
        double bytesPerItem = 0;
        TestTimeout.OnOwnThread(() =>
        {
            for (int round = 0; round < 4; round++)
            {
                long before;
                long after;
                using (loop.Context.PauseLoop())
                {
                    before = GC.GetAllocatedBytesForCurrentThread();
                    for (int i = 0; i < Items; i++)
                    {
                        controller.Post(s_noop, null);
                    }

                    after = GC.GetAllocatedBytesForCurrentThread();
                }

                loop.Context.Drain();
                bytesPerItem = (after - before) / (double)Items;
            }
        }, "the producer");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem, "a cross-thread post under a controller allocates nothing per item");
    }
}
