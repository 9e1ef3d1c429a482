using SyncOverAsync;

namespace Samples.Tests;

/// <summary>Runs alone: the experiment measures the process's thread pool, which a test running beside it (one that blocks pool
/// threads on purpose) would starve; under CI load that once left the await side serving 0 requests in its window.</summary>
[CollectionDefinition(nameof(PoolExperimentTests), DisableParallelization = true)]
[Collection(nameof(PoolExperimentTests))]
public class PoolExperimentTests
{
    [Fact]
    public void Run_WaitAgainstAwait_WaitServesFarFewerRequests()
    {
        // A count, not a time: in the same window, with the same arrivals, how many requests were served. A blocked request needs
        // 100 pool threads to keep up here (200 ms calls, one request every 2 ms); await needs none held. The seed saw 250 times
        // fewer; the test asks for 2 times, so that a pool already grown by earlier tests cannot fail it.
        TimeSpan duration = TimeSpan.FromSeconds(1);
        TimeSpan interval = TimeSpan.FromMilliseconds(2);
        TimeSpan latency = TimeSpan.FromMilliseconds(200);

        PoolResult byAwait = PoolExperiment.Run(Style.Await, duration, interval, latency);
        PoolResult byWait = PoolExperiment.Run(Style.Wait, duration, interval, latency);

        byAwait.Drained.Should().BeTrue();
        byWait.Drained.Should().BeTrue();
        byAwait.Started.Should().BePositive();
        byWait.Started.Should().BePositive();
        byAwait.ServedInWindow.Should().BeGreaterThan(2 * byWait.ServedInWindow, $"await served {byAwait.ServedInWindow}, Wait {byWait.ServedInWindow}");
    }
}
