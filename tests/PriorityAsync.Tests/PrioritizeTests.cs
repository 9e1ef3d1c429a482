using System.Runtime.CompilerServices;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests;

/// <summary>Rules 4 and 5: what <c>await Prioritize(level)</c> and <c>await Yield()</c> do, and how their awaiter behaves.</summary>
public class PrioritizeTests
{
    [Fact]
    public async Task Prioritize_NothingPendingAbove_CompletesSynchronouslyAndSwitchesLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        await loop.Context.RunOn(0, async () =>
        {
            // Work waiting at levels 0 and 1 (below 2) does not stop a switch up to 2.
            loop.Context.GetSynchronizationContext(1).Post(_ => ran.Add("level 1 item"), null);
            loop.Context.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);

            PriorityAwaitable.Awaiter awaiter = Prioritize(2).GetAwaiter();
            awaiter.IsCompleted.Should().BeTrue("nothing is queued above level 2");
            await Prioritize(2);
            ran.Add("after prioritize");
            PriorityContext.CurrentLevel.Should().Be(2);
        }).WithTimeout("the body");

        loop.Context.Drain();
        ran.Should().Equal("after prioritize", "level 1 item", "level 0 item");
    }

    [Fact]
    public async Task Prioritize_WorkPendingAbove_QueuesBehindMoreUrgentWork()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        await loop.Context.RunOn(2, async () =>
        {
            loop.Context.GetSynchronizationContext(2).Post(_ => ran.Add("level 2 item"), null);
            loop.Context.GetSynchronizationContext(1).Post(_ => ran.Add("level 1 item (older)"), null);
            loop.Context.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);

            Prioritize(1).GetAwaiter().IsCompleted.Should().BeFalse("level 2 has work");
            await Prioritize(1);
            ran.Add("continuation at 1");
            PriorityContext.CurrentLevel.Should().Be(1);
        }).WithTimeout("the body");

        loop.Context.Drain();
        ran.Should().Equal("level 2 item", "level 1 item (older)", "continuation at 1", "level 0 item");
    }

    [Fact]
    public async Task Prioritize_LastItemOfAHigherLevelSwitchingDown_CompletesSynchronously()
    {
        // The running item was the last one at level 2, so level 2's bit is still set (a stale bit, allowed by I1):
        // nothing is really pending above level 1, so the switch down must not queue behind the waiting level-1 item.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        await loop.Context.RunOn(2, async () =>
        {
            loop.Context.GetSynchronizationContext(1).Post(_ => ran.Add("level 1 item"), null);
            Prioritize(1).GetAwaiter().IsCompleted.Should().BeTrue("nothing is queued above level 1 (level 2's bit is stale)");
            await Prioritize(1);
            ran.Add("switched down");
            PriorityContext.CurrentLevel.Should().Be(1);

            loop.Context.GetSynchronizationContext(2).Post(_ => ran.Add("level 2 item"), null);
            Prioritize(0).GetAwaiter().IsCompleted.Should().BeFalse("level 2 really has work");
        }).WithTimeout("the body");

        loop.Context.Drain();
        ran.Should().Equal("switched down", "level 2 item", "level 1 item");
    }

    [Fact]
    public async Task Yield_AlwaysQueuesAtCurrentLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ran = new List<string>();
        await loop.Context.RunOn(1, async () =>
        {
            loop.Context.GetSynchronizationContext(0).Post(_ => ran.Add("level 0 item"), null);
            loop.Context.GetSynchronizationContext(1).Post(_ => ran.Add("level 1 item"), null);
            Yield().GetAwaiter().IsCompleted.Should().BeFalse();
            await Yield();
            ran.Add("after yield");
            PriorityContext.CurrentLevel.Should().Be(1);

            // With nothing queued at all, Yield still goes through the queue (and comes straight back).
            await Yield();
            ran.Add("after second yield");
        }).WithTimeout("the body");

        loop.Context.Drain();
        ran.Should().Equal("level 1 item", "after yield", "after second yield", "level 0 item");
    }

    [Fact]
    public async Task Prioritize_FromAnotherThread_HopsOntoTheLoopAtThatLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        int observedThread = 0;
        int observedLevel = -1;
        await Task.Run(async () =>
        {
            var awaitable = loop.Context.Prioritize(1);
            awaitable.GetAwaiter().IsCompleted.Should().BeFalse("another thread always hops");
            await awaitable;
            observedThread = Environment.CurrentManagedThreadId;
            observedLevel = PriorityContext.CurrentLevel;
        }).WithTimeout("the hop");

        observedThread.Should().Be(loop.ManagedThreadId);
        observedLevel.Should().Be(1);
    }

    [Fact]
    public void Prioritize_OutsideAnyContext_ThrowsInvalidOperationThatSaysHowToGetOne()
    {
        TestTimeout.OnOwnThread(() =>
        {
            Action prioritize = () => Prioritize(1);
            prioritize.Should().Throw<InvalidOperationException>().WithMessage("*PriorityContext.Run*PriorityContextThread*");
            Action yield = () => Yield();
            yield.Should().Throw<InvalidOperationException>().WithMessage("*PriorityContext.Run*");
            Action level = () => _ = PriorityContext.CurrentLevel;
            level.Should().Throw<InvalidOperationException>();
            PriorityContext.Current.Should().BeNull();
        }, "outside");
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    [InlineData(int.MaxValue)]
    [InlineData(int.MinValue)]
    public async Task Prioritize_LevelOutOfRange_ThrowsNamingValueAndRange(int level)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        Action instance = () => loop.Context.Prioritize(level);
        instance.Should().Throw<ArgumentOutOfRangeException>()
            .Where(e => e.ParamName == "level" && Equals(e.ActualValue, level))
            .WithMessage("*between 0 and 2*");
        Action yield = () => loop.Context.Yield(level);
        yield.Should().Throw<ArgumentOutOfRangeException>();

        await loop.Context.RunOn(0, () =>
        {
            Action ambient = () => Prioritize(level);
            ambient.Should().Throw<ArgumentOutOfRangeException>().WithMessage("*between 0 and 2*");
        }).WithTimeout("the body");
    }

    private static readonly AsyncLocal<string?> s_flowed = new();

    [Fact]
    public async Task OnCompleted_FlowsExecutionContext_UnsafeOnCompletedDoesNot()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        var safe = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var unsafeResult = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);

        var thread = new Thread(() =>
        {
            s_flowed.Value = "flowed";
            var awaiter = loop.Context.Prioritize(1).GetAwaiter();
            awaiter.OnCompleted(() => safe.TrySetResult(s_flowed.Value));
            awaiter.UnsafeOnCompleted(() => unsafeResult.TrySetResult(s_flowed.Value));
        })
        { IsBackground = true };
        thread.Start();
        thread.JoinOrFail("the thread that queues the continuations");

        (await safe.Task.WithTimeout("OnCompleted continuation")).Should().Be("flowed");
        (await unsafeResult.Task.WithTimeout("UnsafeOnCompleted continuation")).Should().BeNull();
    }

    [Fact]
    public async Task Prioritize_AwaitedAcrossLevels_ResumesAtTargetLevelOnLoopThread()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 4 });
        await using var disposeLoop = loop.BoundedDisposal();
        var levels = await loop.Context.RunOn(0, async () =>
        {
            var seen = new List<int>();
            for (int i = 0; i < 50; i++)
            {
                int target = i % 4;
                loop.Context.GetSynchronizationContext(3).Post(_ => { }, null); // something urgent, so every switch queues
                await Prioritize(target);
                Environment.CurrentManagedThreadId.Should().Be(loop.ManagedThreadId);
                seen.Add(PriorityContext.CurrentLevel);
            }

            return seen;
        }).WithTimeout("the body");

        levels.Should().Equal(Enumerable.Range(0, 50).Select(i => i % 4));
    }

    [Fact]
    public void PriorityAwaitable_IsAStructAwaitableWithCriticalNotifyCompletion()
    {
        typeof(PriorityAwaitable).IsValueType.Should().BeTrue();
        typeof(PriorityAwaitable.Awaiter).IsValueType.Should().BeTrue();
        typeof(ICriticalNotifyCompletion).IsAssignableFrom(typeof(PriorityAwaitable.Awaiter)).Should().BeTrue();
    }
}
