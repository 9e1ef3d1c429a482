using Results;

namespace Samples.Tests;

public class RunnerTests
{
    // Short windows keep the tests quick; the batches still arrive apart, and every batch mixes urgent and non-urgent calls.
    private static readonly Settings s_settings = new() { Window = TimeSpan.FromMilliseconds(100), Work = TimeSpan.FromMicroseconds(5) };

    [Theory]
    [InlineData(Variant.OneByOne)]
    [InlineData(Variant.WhenAll)]
    [InlineData(Variant.WhenAnyLoop)]
    [InlineData(Variant.Packed)]
    [InlineData(Variant.Priority)]
    public void Run_EveryVariant_ProcessesEveryResultExactlyOnce(Variant variant)
    {
        var workload = new Workload(2_000, s_settings.UrgentEvery);

        RunResult result = Runner.Run(variant, workload, s_settings);

        result.Processed.Should().Be(2_000);
        result.NotProcessedExactlyOnce.Should().Be(0);
        result.LastUrgent.Should().BePositive().And.BeLessThanOrEqualTo(result.Total);
    }

    [Theory]
    [InlineData(1_000)]
    [InlineData(20_000)]
    public void Run_Priority_ProcessesEveryUrgentResultBeforeAnyNonUrgentResultReadyNoEarlier(int calls)
    {
        var workload = new Workload(calls, s_settings.UrgentEvery);

        RunResult result = Runner.Run(Variant.Priority, workload, s_settings);

        result.Processed.Should().Be(calls);
        result.OvertakenUrgent.Should().Be(0, "urgent continuations run at a higher level than the prefetches delivered with them");
    }

    [Fact]
    public void Run_OneByOne_SameArrivals_OvertakesUrgentResults()
    {
        // The same arrivals processed in call order: the ordering claim is not vacuous, the metric sees what priorities avoid.
        var workload = new Workload(1_000, s_settings.UrgentEvery);

        RunResult result = Runner.Run(Variant.OneByOne, workload, s_settings);

        result.OvertakenUrgent.Should().BeGreaterThan(workload.UrgentCount / 2);
    }

    [Fact]
    public void Run_TenTimesTheCalls_WhenAnyLoopAllocatesMorePerResultAndPriorityTheSame()
    {
        // Allocated bytes are counts, not times: the WhenAny loop copies and subscribes to every pending call on every lap (O(n) per
        // result); PriorityAsync's cost per result does not depend on how many calls are out.
        Settings fast = s_settings with { Window = TimeSpan.Zero, Work = TimeSpan.Zero };
        Runner.Run(Variant.WhenAnyLoop, new Workload(100, 5), fast); // warm-up
        Runner.Run(Variant.Priority, new Workload(100, 5), fast);

        double whenAnySmall = Runner.Run(Variant.WhenAnyLoop, new Workload(400, 5), fast).BytesPerResult;
        double whenAnyLarge = Runner.Run(Variant.WhenAnyLoop, new Workload(4_000, 5), fast).BytesPerResult;
        double prioritySmall = Runner.Run(Variant.Priority, new Workload(4_000, 5), fast).BytesPerResult;
        double priorityLarge = Runner.Run(Variant.Priority, new Workload(40_000, 5), fast).BytesPerResult;

        (whenAnyLarge / whenAnySmall).Should().BeGreaterThan(5, $"WhenAny: {whenAnySmall:N0} B then {whenAnyLarge:N0} B per result");
        (priorityLarge / prioritySmall).Should().BeInRange(0.5, 1.5, $"PriorityAsync: {prioritySmall:N0} B then {priorityLarge:N0} B per result");
    }

    [Fact]
    public void RunAll_AboveTheWhenAnyLimit_ExtrapolatesFromTheLargestRunInsteadOfRunning()
    {
        Settings settings = s_settings with { Sizes = [100, 300], Variants = [Variant.WhenAnyLoop, Variant.Priority], WhenAnyLimit = 100 };

        IReadOnlyList<RunResult> results = Runner.RunAll(settings);

        results.Select(r => (r.Calls, r.Variant, r.Measured)).Should().Equal(
            (100, Variant.WhenAnyLoop, true), (100, Variant.Priority, true), (300, Variant.WhenAnyLoop, false), (300, Variant.Priority, true));
        RunResult measured = results[0];
        RunResult extrapolated = results[2];
        extrapolated.Processed.Should().Be(0, "it did not run");
        extrapolated.Cpu.Should().Be(measured.Cpu * 9);
        extrapolated.CpuMicrosecondsPerResult.Should().BeApproximately(measured.CpuMicrosecondsPerResult * 3, 1e-6);
    }
}
