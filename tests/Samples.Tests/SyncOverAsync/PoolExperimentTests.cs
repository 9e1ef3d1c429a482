using SyncOverAsync;

namespace Samples.Tests;

/// <summary>Runs alone: the experiment measures the process's thread pool, which a test running beside it (one that blocks pool
/// threads on purpose) would starve.</summary>
/// <remarks>How many more requests <c>await</c> serves than <c>Wait</c> in the same window depends on the thread pool's injection
/// and on how busy the machine is (38 times on the sample's README, with the load it was measured at): a figure, not a test. What
/// holds at any load is why <c>Wait</c> serves few: each request it serves holds a pool thread for the whole call, so in a window of
/// W with at most T threads it serves at most T x W / latency, however fast the machine is.</remarks>
[CollectionDefinition(nameof(PoolExperimentTests), DisableParallelization = true)]
[Collection(nameof(PoolExperimentTests))]
public class PoolExperimentTests
{
    private static readonly TimeSpan s_duration = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan s_interval = TimeSpan.FromMilliseconds(2);
    private static readonly TimeSpan s_latency = TimeSpan.FromMilliseconds(200);

    [Fact]
    public void Run_Wait_ServesNoMoreThanItsPoolThreadsCanHoldForAWholeCallInTheWindow()
    {
        PoolResult byWait = PoolExperiment.Run(Style.Wait, s_duration, s_interval, s_latency);

        byWait.Drained.Should().BeTrue("every blocked request finishes its call once the window closed");
        byWait.Started.Should().BePositive();
        (byWait.ServedInWindow * s_latency).Should().BeLessThanOrEqualTo(
            byWait.PeakThreads * byWait.Duration,
            $"each of the {byWait.ServedInWindow} requests served held one of at most {byWait.PeakThreads} pool threads for a whole {s_latency.TotalMilliseconds} ms call within the {byWait.Duration.TotalMilliseconds:0} ms window");
    }

    [Fact]
    public void Run_Await_StartsAndDrainsEveryRequest()
    {
        PoolResult byAwait = PoolExperiment.Run(Style.Await, s_duration, s_interval, s_latency);

        byAwait.Drained.Should().BeTrue();
        byAwait.Started.Should().BePositive();
        byAwait.ServedInWindow.Should().BeLessThanOrEqualTo(byAwait.Started);
    }
}
