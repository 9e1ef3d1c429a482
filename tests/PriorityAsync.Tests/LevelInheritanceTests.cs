// PA0001, PA0003: these tests need awaits that complete on the thread pool (Task.Delay), and tasks the test itself observes, to prove the level survives them.
#pragma warning disable PA0001, PA0003
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests;

/// <summary>Rule 3: the level is carried by the captured context: across I/O awaits, into callees, and not out of them.</summary>
public class LevelInheritanceTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    public async Task AwaitIo_ResumesAtSameLevelOnLoopThread(int level)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        await loop.Context.RunOn(0, async () =>
        {
            await Prioritize(level);
            var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _ = Task.Run(io.SetResult); // completes on a pool thread, like real I/O
            await io.Task;
            PriorityContext.CurrentLevel.Should().Be(level);
            Environment.CurrentManagedThreadId.Should().Be(loop.ManagedThreadId);

            await Task.Delay(1);
            PriorityContext.CurrentLevel.Should().Be(level);
            SynchronizationContext.Current.Should().BeSameAs(loop.Context.GetSynchronizationContext(level));
        }).WithTimeout("the body");
    }

    [Fact]
    public async Task Callee_InheritsCallersLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        int calleeLevel = await loop.Context.RunOn(0, async () =>
        {
            await Prioritize(1);
            return await CalleeAsync();
        }).WithTimeout("the body");
        calleeLevel.Should().Be(1);

        static async Task<int> CalleeAsync()
        {
            await Task.Delay(1);
            return PriorityContext.CurrentLevel;
        }
    }

    [Fact]
    public async Task CalleePrioritize_DoesNotChangeCallersLevel_WhenItCompletesSynchronously()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        (int inCallee, int afterCallee) = await loop.Context.RunOn(0, async () =>
        {
            await Prioritize(1);
            int seen = await CalleeAsync(); // completes synchronously: Prioritize(2) had nothing above it
            return (seen, PriorityContext.CurrentLevel);
        }).WithTimeout("the body");
        inCallee.Should().Be(2);
        afterCallee.Should().Be(1);

        static async Task<int> CalleeAsync()
        {
            await Prioritize(2);
            return PriorityContext.CurrentLevel;
        }
    }

    [Fact]
    public async Task CalleePrioritize_DoesNotChangeCallersLevel_WhenItSuspends()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        (int inCallee, int afterCallee, int afterIo) = await loop.Context.RunOn(0, async () =>
        {
            await Prioritize(1);
            int seen = await CalleeAsync();
            int after = PriorityContext.CurrentLevel;
            await Task.Delay(1);
            return (seen, after, PriorityContext.CurrentLevel);
        }).WithTimeout("the body");
        inCallee.Should().Be(2);
        afterCallee.Should().Be(1);
        afterIo.Should().Be(1);

        static async Task<int> CalleeAsync()
        {
            await Prioritize(2);
            await Task.Delay(1);
            return PriorityContext.CurrentLevel;
        }
    }

    [Fact]
    public async Task ConfigureAwaitFalse_LeavesTheContext()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityContext? after = await loop.Context.RunOn(1, async () =>
        {
            await Task.Delay(1).ConfigureAwait(false);
            return PriorityContext.Current;
        }).WithTimeout("the body");
        after.Should().BeNull("ConfigureAwait(false) means: do not come back to the captured context");
    }

    [Fact]
    public async Task ContinuationsOfOneLevel_OvertakeLowerLevelWork()
    {
        // The lease story in miniature: an I/O completion at level 2 runs before queued level-1 processing.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var suspended = new ManualResetEventSlim();
        Task lease = loop.Context.RunOn(0, async () =>
        {
            await Prioritize(2);
            suspended.Set();
            await io.Task;
            ran.Add("lease refresh");
        });
        suspended.WaitOrFail("the lease loop to suspend on its I/O");

        using (loop.Context.PauseLoop())
        {
            for (int i = 0; i < 3; i++)
            {
                int n = i;
                loop.Context.GetSynchronizationContext(1).Post(_ => ran.Add($"processing {n}"), null);
            }

            io.SetResult(); // the continuation is posted to level 2 while the loop is paused
        }

        await lease.WithTimeout("the lease continuation");
        loop.Context.Drain();
        ran.Should().Equal("lease refresh", "processing 0", "processing 1", "processing 2");
    }
}
