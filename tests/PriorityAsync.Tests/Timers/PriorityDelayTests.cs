// These tests inspect and misuse the ValueTask of Priority.Delay on purpose.
#pragma warning disable CA2012

using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Timers;

/// <summary><see cref="Priority.Delay"/>: a pooled, loop-owned delay.</summary>
public class PriorityDelayTests
{
    [Fact]
    public async Task Delay_OnTheLoop_ResumesOnTheLoopAtTheAwaitingLevel()
    {
        // The system clock on purpose (the default): the loop's own timed wait and the alarm thread fire these; the tests below
        // drive a FakeTimeProvider.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var result = await loop.Context.RunOn(2, async () =>
        {
            await Delay(TimeSpan.FromMilliseconds(5));
            int first = PriorityContext.CurrentLevel;
            await Prioritize(1);
            await Delay(TimeSpan.FromMilliseconds(1));
            return (first, PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId == loop.ManagedThreadId);
        }).WithTimeout("the delays");

        result.Should().Be((2, 1, true));
    }

    [Fact]
    public async Task Delay_SeveralAtOneLevel_CompleteInDueOrder()
    {
        var clock = new FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new TimerTestHelpers.Log();
        Task all = await loop.Context.RunOn(0, () => Task.FromResult(Task.WhenAll(Wait(30), Wait(10), Wait(20)))).WithTimeout("arming the delays");

        clock.Advance(TimeSpan.FromMilliseconds(30)); // all three due at once: the loop fires them in due order, not in arming order
        await all.WithTimeout("the delays");

        log.Entries.Should().Equal("10", "20", "30");

        async Task Wait(int ms)
        {
            await Delay(TimeSpan.FromMilliseconds(ms));
            log.Add(ms.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
    }

    [Fact]
    public async Task Delay_Zero_CompletesAtOnce()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        bool completed = await loop.Context.RunOn(0, () => Task.FromResult(Delay(TimeSpan.Zero).IsCompletedSuccessfully)).WithTimeout("the check");
        completed.Should().BeTrue();
    }

    [Fact]
    public async Task Delay_CancelledFromAnotherThread_ThrowsTaskCanceledOnTheLoop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        using var cts = new CancellationTokenSource();
        var armed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<(bool OnLoop, int Level, CancellationToken Token)> body = loop.Context.RunOn(1, async () =>
        {
            try
            {
                ValueTask delay = Delay(TimeSpan.FromHours(1), cts.Token);
                armed.SetResult();
                await delay;
                throw new InvalidOperationException("not cancelled");
            }
            catch (TaskCanceledException ex)
            {
                return (Environment.CurrentManagedThreadId == loop.ManagedThreadId, PriorityContext.CurrentLevel, ex.CancellationToken);
            }
        });
        await armed.Task.WithTimeout("the delay to be armed");
        TestTimeout.OnOwnThread(cts.Cancel, "canceller");

        var (onLoop, level, token) = await body.WithTimeout("the cancelled delay");
        (onLoop, level).Should().Be((true, 1));
        token.Should().Be(cts.Token);
        loop.Context.ArmedTimerCount.Should().Be(0);
    }

    [Fact]
    public async Task Delay_AlreadyCancelledToken_CompletesCancelledAtOnce()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        bool canceled = await loop.Context.RunOn(0, () => Task.FromResult(Delay(TimeSpan.FromSeconds(1), new CancellationToken(true)).IsCanceled)).WithTimeout("the check");
        canceled.Should().BeTrue();
    }

    [Fact]
    public async Task Delay_InfiniteThenCancelled_Throws()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        using var cts = new CancellationTokenSource();
        Task body = loop.Context.RunOn(0, async () =>
        {
            ValueTask delay = Delay(Timeout.InfiniteTimeSpan, cts.Token);
            cts.Cancel(); // on the loop: the registration runs inline and queues the firing
            await delay;
        });

        await FluentActions.Awaiting(() => body.WithTimeout("the cancelled delay")).Should().ThrowAsync<TaskCanceledException>();
    }

    [Fact]
    public async Task Delay_PendingWhenTheContextFinishes_IsDroppedAndTheAwaiterThrowsObjectDisposed()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "ending" });
        var dropped = new List<DropReason>();
        loop.Context.WorkDropped += (_, e) => dropped.Add(e.Reason);
        var armed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task body = loop.Context.RunOn(0, async () =>
        {
            ValueTask delay = Delay(Timeout.InfiniteTimeSpan);
            armed.SetResult();
            await delay;
        });
        await armed.Task.WithTimeout("the delay to be armed");
        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish");

        (await FluentActions.Awaiting(() => body.WithTimeout("the dropped delay")).Should().ThrowAsync<ObjectDisposedException>())
            .WithMessage("*'ending'*");
        dropped.Should().Equal(DropReason.TimerArmedAtFinish);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(1);
    }

    [Fact]
    public async Task Delay_AwaitedTwice_ThrowsInvalidOperation()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        Task body = loop.Context.RunOn(0, async () =>
        {
            ValueTask delay = Delay(TimeSpan.FromMilliseconds(1));
            await delay;
            await delay; // misuse: the pooled source has moved on
        });

        await FluentActions.Awaiting(() => body.WithTimeout("the misuse")).Should().ThrowAsync<InvalidOperationException>();
    }

    [Fact]
    public async Task Delay_AsTaskAwaitedOffTheLoop_Completes()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        Task task = await loop.Context.RunOn(0, () => Task.FromResult(Delay(TimeSpan.FromMilliseconds(1)).AsTask())).WithTimeout("arming");
        await task.WithTimeout("the delay awaited from the test thread");
        loop.Context.Drain();
        loop.Context.PooledDelayCount.Should().Be(1, "the source went back to the pool after GetResult");
    }

    [Fact]
    public void Delay_OutsideAContext_ThrowsInvalidOperation()
    {
        TestTimeout.OnOwnThread(
            () => FluentActions.Invoking(() => Delay(TimeSpan.FromMilliseconds(1))).Should().Throw<InvalidOperationException>().WithMessage("*Delay*"),
            "outside");
    }

    [Theory]
    [InlineData(-2)]
    [InlineData(4294967295.0)]
    public async Task Delay_OutOfRange_ThrowsLikeTaskDelay(double ms)
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        TimeSpan delay = TimeSpan.FromMilliseconds(ms);
        Exception? expected = Record(() => Task.Delay(delay, TimeProvider.System));
#pragma warning disable PA0003 // the call throws before it returns a task: there is nothing to own
        Exception? actual = await loop.Context.RunOn(0, () => Task.FromResult(Record(() => Delay(delay)))).WithTimeout("the call");
#pragma warning restore PA0003
        actual.Should().BeOfType(expected!.GetType());
        ((ArgumentException)actual!).ParamName.Should().Be(((ArgumentException)expected).ParamName);
    }

    private static Exception? Record(Action action)
    {
        try
        {
            action();
            return null;
        }
        catch (Exception ex)
        {
            return ex;
        }
    }
}
