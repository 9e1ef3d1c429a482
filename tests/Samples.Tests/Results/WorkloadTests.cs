using Results;

namespace Samples.Tests;

public class WorkloadTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(10)]
    [InlineData(1_000)]
    [InlineData(100_000)]
    public void Constructor_AnySize_PutsEveryCallInExactlyOneBatchInIndexOrder(int calls)
    {
        var workload = new Workload(calls, urgentEvery: 5);

        workload.BatchCount.Should().Be(Math.Min(calls, Workload.MaxBatches));
        workload.Batches.SelectMany(b => b).Order().Should().Equal(Enumerable.Range(0, calls));
        for (int b = 0; b < workload.BatchCount; b++)
        {
            workload.Batches[b].Should().BeInAscendingOrder();
            workload.Batches[b].All(call => workload.BatchOf[call] == b).Should().BeTrue();
        }

        workload.UrgentCount.Should().Be(workload.IsUrgent.Count(u => u));
    }

    [Fact]
    public void Constructor_ThousandCalls_MixesUrgentAndNonUrgentCallsInNearlyEveryBatch()
    {
        var workload = new Workload(1_000, urgentEvery: 5);

        workload.UrgentCount.Should().BeInRange(150, 250, "one call in five is urgent, on average");
        workload.Batches.Count(batch => batch.Any(c => workload.IsUrgent[c]) && batch.Any(c => !workload.IsUrgent[c]))
            .Should().BeGreaterThan(40, "nearly every batch must hold both kinds, or the ordering claim would be tested on nothing");
    }

    [Fact]
    public void Constructor_SameArguments_SameCalls()
    {
        var first = new Workload(5_000, 5);
        var second = new Workload(5_000, 5);

        second.BatchOf.Should().Equal(first.BatchOf);
        second.IsUrgent.Should().Equal(first.IsUrgent);
    }
}
