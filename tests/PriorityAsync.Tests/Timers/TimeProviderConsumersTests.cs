using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Timers;

/// <summary>What .NET builds on a <see cref="TimeProvider"/> works on the loop, at the awaiting level, through the loop's timers.</summary>
public class TimeProviderConsumersTests
{
    [Fact]
    public async Task TaskDelay_WithTheLoopsProvider_ResumesOnTheLoopAtTheLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var result = await loop.Context.RunOn(2, async () =>
        {
            // The system clock on purpose (the default): the loop's own timers fire it, not a provider's timer.
            await Task.Delay(TimeSpan.FromMilliseconds(5), loop.Context.TimeProvider);
            return (Environment.CurrentManagedThreadId == loop.ManagedThreadId, PriorityContext.CurrentLevel);
        }).WithTimeout("the delay");

        result.Should().Be((true, 2));
    }

    [Fact]
    public async Task TaskDelay_Cancelled_ThrowsOnTheLoopAndDisarmsTheTimer()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        using var cts = new CancellationTokenSource();
        Task body = loop.Context.RunOn(0, async () =>
        {
            Task delay = Task.Delay(TimeSpan.FromHours(1), loop.Context.TimeProvider, cts.Token);
            cts.Cancel();
            await delay;
        });

        await FluentActions.Awaiting(() => body.WithTimeout("the cancelled delay")).Should().ThrowAsync<TaskCanceledException>();
        loop.Context.ArmedTimerCount.Should().Be(0, "Task.Delay disposes its timer when cancelled");
    }

    [Fact]
    public async Task WaitAsync_TimesOutOnTheLoop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var never = new TaskCompletionSource();
        var result = await loop.Context.RunOn(1, async () =>
        {
            try
            {
                await never.Task.WaitAsync(TimeSpan.FromMilliseconds(5), loop.Context.TimeProvider);
                return (false, false, -1);
            }
            catch (TimeoutException)
            {
                return (true, Environment.CurrentManagedThreadId == loop.ManagedThreadId, PriorityContext.CurrentLevel);
            }
        }).WithTimeout("the timeout");

        result.Should().Be((true, true, 1));
    }

    [Fact]
    public async Task PeriodicTimer_TicksOnTheLoop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var ticks = await loop.Context.RunOn(2, async () =>
        {
            var seen = new List<(bool, int)>();
            using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(2), loop.Context.TimeProvider);
            while (seen.Count < 3 && await timer.WaitForNextTickAsync())
            {
                seen.Add((Environment.CurrentManagedThreadId == loop.ManagedThreadId, PriorityContext.CurrentLevel));
            }

            return seen;
        }).WithTimeout("three ticks");

        ticks.Should().Equal((true, 2), (true, 2), (true, 2));
        loop.Context.ArmedTimerCount.Should().Be(0, "disposing the PeriodicTimer disposes its loop timer");
    }

    [Fact]
    public async Task CancellationTokenSource_WithTheLoopsProvider_CancelsOnTheLoop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var cancelled = new TaskCompletionSource<(bool OnLoop, int Level)>(TaskCreationOptions.RunContinuationsAsynchronously);
        CancellationTokenSource? cts = null;
        await loop.Context.RunOn(1, () =>
        {
            cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(5), loop.Context.TimeProvider);
            cts.Token.Register(() => cancelled.SetResult((Environment.CurrentManagedThreadId == loop.ManagedThreadId, PriorityContext.CurrentLevel)));
        }).WithTimeout("creating the source");

        (await cancelled.Task.WithTimeout("the cancellation")).Should().Be((true, 1));
        cts!.Dispose();
    }
}
