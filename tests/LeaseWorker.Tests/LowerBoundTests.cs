namespace LeaseWorker.Tests;

public class LowerBoundTests
{
    // Unscaled (time scale 1), so the numbers are the seed's.
    private static readonly Settings s_seed = new() { Messages = 100, Steps = 20, TimeScale = 1 };

    [Fact]
    public void For_OneThread_IsAllCpuBackToBackPlusTheFirstReceiveAndTheLastIoAndAck()
    {
        // 0.25 s + 100 x 20 x 1 s + 1 s + 0.25 s: the seed's 33.3-minute bound, plus the unavoidable ends.
        LowerBound.For(s_seed, cpuThreads: 1).Should().Be(TimeSpan.FromSeconds(2001.5));
    }

    [Fact]
    public void For_SpinningOnTwoCores_HalvesTheCpuWork()
    {
        LowerBound.For(s_seed, cpuThreads: 2).Should().Be(TimeSpan.FromSeconds(1001.5));
    }

    [Fact]
    public void For_NoThreadLimit_IsTheChainOfReceivesThenTheLastMessage()
    {
        // 100 x 0.25 s of receiving, then 20 x (1 s + 1 s) of the last message, then its ack.
        LowerBound.For(s_seed, cpuThreads: null).Should().Be(TimeSpan.FromSeconds(65.25));
        LowerBound.For(s_seed with { Cpu = TimeSpan.FromMilliseconds(100) }, cpuThreads: null).Should().Be(TimeSpan.FromSeconds(47.25));
    }
}
