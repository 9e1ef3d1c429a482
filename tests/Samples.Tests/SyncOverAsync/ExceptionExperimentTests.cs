using SyncOverAsync;

namespace Samples.Tests;

public class ExceptionExperimentTests
{
    [Fact]
    public void Run_FailingCall_WaitWrapsItRunAndAwaitRethrowItUnwrapped()
    {
        (Exception byWait, Exception byRun, Exception byAwait) = ExceptionExperiment.Run(TimeSpan.FromMilliseconds(1));

        byWait.Should().BeOfType<AggregateException>()
            .Which.InnerExceptions.Should().ContainSingle().Which.Should().BeOfType<InvalidOperationException>()
            .Which.Message.Should().Be("Operation was invalid");
        byRun.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Be("Operation was invalid");
        byAwait.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Be("Operation was invalid");
    }
}
