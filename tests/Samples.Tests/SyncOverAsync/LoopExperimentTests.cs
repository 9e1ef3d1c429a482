using SyncOverAsync;
using PriorityAsync;

namespace Samples.Tests;

public class LoopExperimentTests
{
    private static readonly TimeSpan s_stallTimeout = TimeSpan.FromMilliseconds(200);
    private static readonly TimeSpan s_latency = TimeSpan.FromMilliseconds(10);

    [Fact]
    public void Run_WaitOnTheLoop_ReportedOnceWithTheRequestsLevelAndTheBlockedContinuation()
    {
        // Bounded: the experiment gives up (and says so in the outcome) if no report releases the wait.
        StallResult result = LoopExperiment.Run(Style.Wait, s_stallTimeout, s_latency);

        result.RequestOutcome.Should().Be("released by the report", "the watchdog, not the give-up timeout, must end the wait");
        StallDetectedEventArgs report = result.Reports.Should().ContainSingle().Subject;
        report.Level.Should().Be(LoopExperiment.RequestLevel, "the blocked continuation waits at the level its request runs at");
        report.PendingCount.Should().Be(1, "the backend call's continuation, queued to the blocked loop");
        report.WaitingFor.Should().BeGreaterThanOrEqualTo(s_stallTimeout);
        report.StallTimeout.Should().Be(s_stallTimeout);
        result.ReportedAfter.Should().NotBeNull();
        result.BackendCallsCompleted.Should().Be(1, "once released, the loop runs the call's continuation");
        result.LoopEnded.Should().BeTrue();
    }

    [Fact]
    public void Run_AwaitOnTheLoop_ServedWithoutAnyReport()
    {
        StallResult result = LoopExperiment.Run(Style.Await, s_stallTimeout, s_latency);

        result.RequestOutcome.Should().Be("served");
        result.Reports.Should().BeEmpty();
        result.ReportedAfter.Should().BeNull();
        result.BackendCallsCompleted.Should().Be(1);
        result.LoopEnded.Should().BeTrue();
    }
}
