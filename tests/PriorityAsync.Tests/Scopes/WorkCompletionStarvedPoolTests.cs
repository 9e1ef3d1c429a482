using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Timers;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Scopes;

/// <summary>
/// Work the loop started completes on the loop: an <c>InvokeAsync</c> task, a scope's child and a scope's body end where the work's own
/// task ends, never through the thread pool, so code on the loop that awaits them goes on with every pool thread blocked. Also when the
/// work's delegate returns another task the library completes (a scope's, another InvokeAsync's), which runs its continuations
/// asynchronously. <see cref="PriorityTask.WhenAll(IEnumerable{PriorityTask})"/> too (<c>Task.WhenAll</c> over these tasks would complete on
/// a pool thread).
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
                    await loop.Context.InvokeAsync(() => TaskScope.RunAsync(async _ => await Yield()), level: 0);
                    steps.Add("InvokeAsync of a scope");
                    await loop.Context.InvokeAsync(() => loop.Context.InvokeAsync(async () => await Yield(), level: 0).Task, level: 1);
                    steps.Add("InvokeAsync of an InvokeAsync");
                    int[] results = await PriorityTask.WhenAll(
                        [loop.Context.InvokeAsync(async () => { await Yield(); return 1; }, level: 0), loop.Context.InvokeAsync(() => Task.FromResult(2), level: 1)]);
                    steps.Add($"WhenAll {string.Join(",", results)}");
                    await PriorityTask.WhenAll([loop.Context.InvokeAsync(async () => await Yield(), level: 0)]);
                    steps.Add("untyped WhenAll");
                    done.Set();
                },
                null);

            done.WaitOrFail("the loop's work, with the pool starved");
            StarvedPool.IsStarved.Should().BeTrue("the test is only meaningful while blockers still wait in the pool's queue");
        }

        steps.Should().Equal(
            "InvokeAsync", "child", "scope", "InvokeAsync of a scope", "InvokeAsync of an InvokeAsync", "WhenAll 1,2", "untyped WhenAll");
    }
}
