using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Timers;

/// <summary>Bad input to the loop's <see cref="TimeProvider"/> throws exactly what <see cref="TimeProvider.System"/> throws for the same input.</summary>
public class TimerValidationTests
{
    public static TheoryData<TimeSpan, TimeSpan> DueAndPeriod => new()
    {
        { TimeSpan.FromMilliseconds(-2), Timeout.InfiniteTimeSpan },
        { TimeSpan.FromMilliseconds(-1), Timeout.InfiniteTimeSpan },
        { TimeSpan.FromMilliseconds(-0.5), Timeout.InfiniteTimeSpan },
        { TimeSpan.MinValue, Timeout.InfiniteTimeSpan },
        { TimeSpan.MaxValue, Timeout.InfiniteTimeSpan },
        { TimeSpan.FromMilliseconds(0xFFFFFFFE), Timeout.InfiniteTimeSpan },
        { TimeSpan.FromMilliseconds(0xFFFFFFFF), Timeout.InfiniteTimeSpan },
        { TimeSpan.Zero, TimeSpan.FromMilliseconds(-2) },
        { TimeSpan.Zero, TimeSpan.MaxValue },
        { TimeSpan.Zero, TimeSpan.FromMilliseconds(0xFFFFFFFF) },
        { TimeSpan.FromMilliseconds(-5), TimeSpan.FromMilliseconds(-5) },
        { Timeout.InfiniteTimeSpan, TimeSpan.Zero },
    };

    [Theory]
    [MemberData(nameof(DueAndPeriod))]
    public async Task CreateTimer_SameInputAsTheSystemProvider_SameOutcome(TimeSpan dueTime, TimeSpan period)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "validating" });
        await using var disposeLoop = loop.BoundedDisposal();
        Exception? expected = Record(() => TimeProvider.System.CreateTimer(_ => { }, null, dueTime, period));
        Exception? actual = Record(() => loop.Context.TimeProvider.CreateTimer(_ => { }, null, dueTime, period));

        Compare(expected, actual);
        if (actual is not null)
        {
            actual.Message.Should().Contain("'validating'", "messages name the context");
        }
    }

    [Theory]
    [MemberData(nameof(DueAndPeriod))]
    public async Task Change_SameInputAsTheSystemProvider_SameOutcome(TimeSpan dueTime, TimeSpan period)
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        using ITimer system = TimeProvider.System.CreateTimer(_ => { }, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        using ITimer ours = loop.Context.TimeProvider.CreateTimer(_ => { }, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        bool? systemResult = null;
        bool? ourResult = null;
        Exception? expected = Record(() => systemResult = system.Change(dueTime, period));
        Exception? actual = Record(() => ourResult = ours.Change(dueTime, period));

        Compare(expected, actual);
        ourResult.Should().Be(systemResult);
    }

    [Fact]
    public async Task CreateTimer_NullCallback_ThrowsLikeTheSystemProvider()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        Exception? expected = Record(() => TimeProvider.System.CreateTimer(null!, null, TimeSpan.Zero, TimeSpan.Zero));
        Exception? actual = Record(() => loop.Context.TimeProvider.CreateTimer(null!, null, TimeSpan.Zero, TimeSpan.Zero));
        expected.Should().NotBeNull();
        Compare(expected, actual);
    }

    [Fact]
    public async Task Change_AfterDispose_ReturnsWhatTheSystemTimerReturns()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        ITimer system = TimeProvider.System.CreateTimer(_ => { }, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        ITimer ours = loop.Context.TimeProvider.CreateTimer(_ => { }, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        system.Dispose();
        ours.Dispose();
        bool? systemResult = null;
        bool? ourResult = null;
        Exception? expected = Record(() => systemResult = system.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan));
        Exception? actual = Record(() => ourResult = ours.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan));
        Compare(expected, actual);
        ourResult.Should().Be(systemResult);
    }

    private static void Compare(Exception? expected, Exception? actual)
    {
        if (expected is null)
        {
            actual.Should().BeNull();
            return;
        }

        actual.Should().NotBeNull($"TimeProvider.System threw {expected.GetType().Name}");
        actual!.GetType().Should().Be(expected.GetType());
        (actual as ArgumentException)?.ParamName.Should().Be(((ArgumentException)expected).ParamName);
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
