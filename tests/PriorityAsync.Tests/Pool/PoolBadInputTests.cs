using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Pool;

/// <summary>Every public entry point of the pool rejects bad input with the documented exception, naming the value and the range.</summary>
public class PoolBadInputTests
{
    public static TheoryData<string, Action<PriorityThreadPoolOptions>> BadOptions => new()
    {
        { "Levels", o => o.Levels = 0 },
        { "Levels", o => o.Levels = 65 },
        { "DefaultLevel", o => o.DefaultLevel = 3 },
        { "DefaultLevel", o => o.DefaultLevel = -1 },
        { "ThreadCount", o => o.ThreadCount = 0 },
        { "ThreadCount", o => o.ThreadCount = PriorityThreadPoolOptions.MaxThreadCount + 1 },
        { "IdleSpinCount", o => o.IdleSpinCount = -1 },
        { "StallTimeout", o => o.StallTimeout = TimeSpan.FromMilliseconds(1) },
        { "Policy", o => o.Policy = PriorityPolicy.WeightedShares(1, 2) },
        { "MaxConcurrencyPerLevel", o => o.MaxConcurrencyPerLevel = [1, 1] },
        { "MaxConcurrencyPerLevel", o => o.MaxConcurrencyPerLevel = [0, 1, 1] },
        { "MaxConcurrencyPerLevel", o => o.MaxConcurrencyPerLevel = [1, 3, 1] },
    };

    [Theory]
    [MemberData(nameof(BadOptions))]
    public void Constructor_BadOption_ThrowsNamingIt(string option, Action<PriorityThreadPoolOptions> spoil)
    {
        var options = new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 3 };
        spoil(options);
        Action create = () => new PriorityThreadPool(options).Dispose();
        create.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(option);
    }

    [Fact]
    public void Options_NullPolicyOrClock_ThrowArgumentNull()
    {
        var options = new PriorityThreadPoolOptions();
        FluentActions.Invoking(() => options.Policy = null!).Should().Throw<ArgumentNullException>();
        FluentActions.Invoking(() => options.TimeProvider = null!).Should().Throw<ArgumentNullException>();
        options.ThreadCount.Should().Be(Environment.ProcessorCount);
        options.StallTimeout.Should().Be(PriorityContextOptions.DefaultStallTimeout);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    [InlineData(int.MaxValue)]
    public async Task EveryLevelTakingMember_LevelOutOfRange_ThrowsNamingTheRange(int level)
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 3 });
        var calls = new Action[]
        {
            () => pool.Prioritize(level),
            () => pool.Yield(level),
            () => pool.GetSynchronizationContext(level),
            () => pool.GetScheduler(level),
            () => pool.GetTaskFactory(level),
            () => pool.GetTimeProvider(level),
            () => pool.GetMaxConcurrency(level),
            () => pool.InvokeAsync(() => Task.CompletedTask, level),
            () => pool.InvokeAsync(() => Task.FromResult(1), level),
        };
        foreach (Action call in calls)
        {
            call.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(level)).WithMessage("*between 0 and 2*");
        }
    }

    [Fact]
    public async Task NullDelegates_ThrowArgumentNull()
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        Action invoke = () => pool.InvokeAsync(null!);
        invoke.Should().Throw<ArgumentNullException>();
        Action invokeTyped = () => pool.InvokeAsync<int>(null!, 0);
        invokeTyped.Should().Throw<ArgumentNullException>();
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).Post(null!, null)).Should().Throw<ArgumentNullException>().WithParameterName("d");
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).Send(null!, null)).Should().Throw<ArgumentNullException>().WithParameterName("d");
        FluentActions.Invoking(() => pool.GetTimeProvider(0).CreateTimer(null!, null, TimeSpan.Zero, TimeSpan.Zero)).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public async Task InvokeAsync_DelegateReturnsNull_FaultsTheTask()
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await FluentActions.Awaiting(() => pool.InvokeAsync(() => null!).WithTimeout("the task")).Should().ThrowAsync<InvalidOperationException>();
    }

    [Fact]
    public async Task Delay_OutOfRange_Throws_AndSharesOutOfRangeThrow()
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Policy = PriorityPolicy.WeightedShares(1, 1) });
        await pool.InvokeAsync(() =>
        {
            FluentActions.Invoking(() => Priority.Delay(TimeSpan.FromMilliseconds(-2))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("delay");
            return Task.CompletedTask;
        }).WithTimeout("the body");
        FluentActions.Invoking(() => pool.SetShares(0, 0)).Should().Throw<ArgumentOutOfRangeException>();
        FluentActions.Invoking(() => pool.SetShares(2, 1)).Should().Throw<ArgumentOutOfRangeException>();
    }

    [Fact]
    public async Task OperationCompleted_Unmatched_Throws()
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        pool.Complete();
        await pool.Completion.WithTimeout("the pool");
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).OperationCompleted()).Should().Throw<InvalidOperationException>();
    }

    [Fact]
    public void StaticApi_OutsideBothSchedulers_ThrowsInvalidOperation()
    {
        FluentActions.Invoking(() => Priority.CurrentLevel).Should().Throw<InvalidOperationException>();
        Priority.CurrentScheduler.Should().BeNull();
        PriorityThreadPool.Current.Should().BeNull();
        FluentActions.Invoking(() => Priority.Start(_ => Task.CompletedTask)).Should().Throw<InvalidOperationException>();
    }
}
