using Microsoft.Extensions.Time.Testing;

namespace PriorityAsync.Tests.Docs;

/// <summary>The example of docs/testing.md, compiled and run here; tools/Snippets copies the region there, and tests/Docs.Tests checks the copy.</summary>
public class FakeClockExampleTests
{
    // begin-snippet: testing-fake-clock
    // Needs: an xunit test class; using PriorityAsync; Microsoft.Extensions.TimeProvider.Testing (FakeTimeProvider).
    [Fact]
    public async Task Renewer_RenewsItsLeaseEveryMinute_WithoutWaitingAMinute()
    {
        var clock = new FakeTimeProvider();
        await using var loop = new PriorityContextThread(new PriorityContextOptions { TimeProvider = clock });
        var renewedAt = new List<DateTimeOffset>();
        var armed = new SemaphoreSlim(0);

        // The code under test: renews a lease every minute, waiting on the loop's own timer.
        Task renewer = loop.Context.GetTaskFactory(1).StartNew(async () =>
        {
            for (int i = 0; i < 3; i++)
            {
                ValueTask minute = Priority.Delay(TimeSpan.FromMinutes(1));
                armed.Release(); // armed: the test may move the clock on
                await minute;
                renewedAt.Add(clock.GetUtcNow());
            }
        }).Unwrap();

        DateTimeOffset start = clock.GetUtcNow();
        for (int i = 0; i < 3; i++)
        {
            (await armed.WaitAsync(TimeSpan.FromSeconds(10))).Should().BeTrue("the renewer arms its next wait");
            clock.Advance(TimeSpan.FromMinutes(1)); // the delay fires on the loop now, not a minute from now
        }

        await renewer.WaitAsync(TimeSpan.FromSeconds(10));
        renewedAt.Should().Equal(start.AddMinutes(1), start.AddMinutes(2), start.AddMinutes(3));
    }
    // end-snippet
}
