using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Timers;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Scopes;

/// <summary>
/// Work the loop started completes on the loop: an <c>InvokeAsync</c> task, a scope's child and a scope's body end where the work's own
/// task ends, never through the thread pool, so code on the loop that awaits them goes on with every pool thread blocked.
/// </summary>
[Collection(PoolStarvationCollection.Name)]
public class WorkCompletionStarvedPoolTests
{
    [Fact]
    public void InvokeAsyncChildAndScope_WithThePoolStarved_CompleteOnTheLoop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "starved" });
        using var disposeLoop = loop.BoundedDisposal();
        using var done = new ManualResetEventSlim(false);
        var steps = new List<string>();
        using (new StarvedPool())
        {
            loop.Context.GetSynchronizationContext(2).Post(
                async _ =>
                {
                    await loop.Context.InvokeAsync(async () => await Yield(), level: 0);
                    steps.Add("InvokeAsync");
                    await TaskScope.RunAsync(async scope =>
                    {
                        await scope.StartAsync(async _ => await Yield(), level: 1);
                        steps.Add("child");
                        await Yield();
                    });
                    steps.Add("scope");
                    done.Set();
                },
                null);

            done.WaitOrFail("the loop's work, with the pool starved");
            StarvedPool.IsStarved.Should().BeTrue("the test is only meaningful while blockers still wait in the pool's queue");
        }

        steps.Should().Equal("InvokeAsync", "child", "scope");
    }
}
