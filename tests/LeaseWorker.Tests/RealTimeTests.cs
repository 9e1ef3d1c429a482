using System.Globalization;
using Xunit.Abstractions;

namespace LeaseWorker.Tests;

/// <summary>
/// The mode virtual time cannot run: <c>priority-threads</c>, on a <see cref="PriorityAsync.PriorityThreadPool"/> with one thread per
/// core (its threads cannot tell when the whole pool is idle, so no one of them may jump a clock). Real time, at a small scale, and
/// only what holds at any load: every message accounted for once by the bus, and never more CPU parts at once than the pool has
/// threads. Whether it keeps every lease, and how close it comes to the bound, depends on how busy the machine is: those figures are
/// in docs/benchmarks.md ("Several threads") and the sample's README, with the load they were measured at.
/// </summary>
public class RealTimeTests
{
    private readonly ITestOutputHelper _output;

    public RealTimeTests(ITestOutputHelper output) => _output = output;

    [Fact]
    public async Task PriorityThreads_ArticleRatios_AccountsForEveryMessage_AndRunsAtMostOnePartPerThread()
    {
        Settings settings = new() { TimeScale = 0.05, Messages = 6, Steps = 4 };

        ModeResult r = await Simulation.RunAsync(PriorityThreadsMode.ModeName, settings);
        _output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"lost {r.Bus.Lost} of {r.Bus.Received}, makespan/bound {r.MakespanOverBound:0.000}, peak threads {r.PeakThreads}, bystander stall {r.MachineStall.TotalMilliseconds:0} ms"));

        r.Bus.Received.Should().Be(6);
        (r.Bus.Succeeded + r.Bus.Lost).Should().Be(6, "each delivered message ends acknowledged or lost, once");
        r.CpuThreads.Should().Be(Environment.ProcessorCount);
        r.PeakThreads.Should().BeInRange(1, Environment.ProcessorCount, "a pool thread runs one CPU part at a time");
    }
}
