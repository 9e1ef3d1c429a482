using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>A host's drain allocates nothing per item, with or without a budget, measured in bytes on the host's thread around a warm
/// loop (as <see cref="AllocationTests"/> does for the loop); and a drain with nothing queued allocates nothing at all.</summary>
public class HostDrainAllocationTests
{
    private const int Items = 100_000;
    private const double BudgetBytesPerItem = 2.0;

    private static readonly SendOrPostCallback s_noop = static _ => { };

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void PostAndDrain_OnTheHostsThread_AllocatesNothingPerItem(bool budget)
    {
        double bytesPerItem = double.NaN;
        TestTimeout.OnOwnThread(
            () =>
            {
                using PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3, StallTimeout = null });
                var levels = new[] { driver.Context.GetSynchronizationContext(0), driver.Context.GetSynchronizationContext(1), driver.Context.GetSynchronizationContext(2) };
                for (int warm = 0; warm < 3; warm++)
                {
                    PostAndDrain(); // warm-up: each level's segment grows until it holds the peak backlog
                }

                long before = GC.GetAllocatedBytesForCurrentThread();
                PostAndDrain();
                long after = GC.GetAllocatedBytesForCurrentThread();
                bytesPerItem = (after - before) / (double)Items;

                void PostAndDrain()
                {
                    for (int i = 0; i < Items; i++)
                    {
                        levels[i % 3].Post(s_noop, null); // outside a drain: the producer's path, fence and state check included
                    }

                    PriorityDrainResult result = budget ? driver.Drain(PriorityContextDriver.MaxBudget, alwaysDrainFromLevel: 2) : driver.Drain();
                    result.ItemsRun.Should().Be(Items);
                }
            },
            "the host");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem, "posting and draining allocate nothing per item (both on the host's thread)");
    }

    [Fact]
    public void Drain_NothingQueued_AllocatesNothing()
    {
        long bytes = -1;
        TestTimeout.OnOwnThread(
            () =>
            {
                using PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { StallTimeout = null });
                driver.Drain(TimeSpan.FromMilliseconds(4));
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < Items; i++)
                {
                    driver.Drain(TimeSpan.FromMilliseconds(4));
                }

                bytes = GC.GetAllocatedBytesForCurrentThread() - before;
            },
            "the host");

        bytes.Should().Be(0);
    }
}
