using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests;

public class SmokeTests
{
    [Fact]
    public void Run_PrioritizeAndAwait_KeepsLevel()
    {
        TestTimeout.OnOwnThread(() =>
        {
            int result = PriorityContext.Run(async () =>
            {
                PriorityContext.CurrentLevel.Should().Be(0);
                await Prioritize(2);
                PriorityContext.CurrentLevel.Should().Be(2);
                await Task.Delay(1);
                PriorityContext.CurrentLevel.Should().Be(2);
                return 42;
            });
            result.Should().Be(42);
        }, nameof(Run_PrioritizeAndAwait_KeepsLevel));
    }
}
