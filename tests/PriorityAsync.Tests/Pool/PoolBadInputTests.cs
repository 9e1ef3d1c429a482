using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Pool;

/// <summary>Every public entry point of the pool rejects bad input with the documented exception, naming the value and the range.</summary>
public class PoolBadInputTests
{
    /// <summary>Each bad option (the pool is created with 2 threads and 3 levels otherwise), the value it must report and the range its
    /// message must state.</summary>
    public static TheoryData<string, Action<PriorityThreadPoolOptions>, object, string> BadOptions => new()
    {
        { "Levels", o => o.Levels = 0, 0, "*between 1 and 64*" },
        { "Levels", o => o.Levels = 65, 65, "*between 1 and 64*" },
        { "DefaultLevel", o => o.DefaultLevel = 3, 3, "*between 0 and 2*" },
        { "DefaultLevel", o => o.DefaultLevel = -1, -1, "*between 0 and 2*" },
        { "ThreadCount", o => o.ThreadCount = 0, 0, "*between 1 and 256*" },
        { "ThreadCount", o => o.ThreadCount = PriorityThreadPoolOptions.MaxThreadCount + 1, 257, "*between 1 and 256*" },
        { "ThreadCount", o => o.ThreadCount = int.MinValue, int.MinValue, "*between 1 and 256*" },
        { "IdleSpinCount", o => o.IdleSpinCount = -1, -1, "*between 0 and 10000*" },
        { "IdleSpinCount", o => o.IdleSpinCount = PrioritySchedulerOptions.MaxIdleSpinCount + 1, 10_001, "*between 0 and 10000*" },
        { "StallTimeout", o => o.StallTimeout = TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1), "*null (off) or between 00:00:00.0100000 and 1.00:00:00*" },
        { "StallTimeout", o => o.StallTimeout = TimeSpan.FromMilliseconds(-1), TimeSpan.FromMilliseconds(-1), "*null (off) or between 00:00:00.0100000 and 1.00:00:00*" },
        { "StallTimeout", o => o.StallTimeout = PrioritySchedulerOptions.MaxStallTimeout + TimeSpan.FromTicks(1), PrioritySchedulerOptions.MaxStallTimeout + TimeSpan.FromTicks(1), "*null (off) or between 00:00:00.0100000 and 1.00:00:00*" },
        { "TimeSlice", o => o.TimeSlice = PrioritySchedulerOptions.MaxTimeSlice + TimeSpan.FromTicks(1), PrioritySchedulerOptions.MaxTimeSlice + TimeSpan.FromTicks(1), "*null*00:00:00.0010000*00:01:00*" },
        { "Policy", o => o.Policy = PriorityPolicy.WeightedShares(1, 2), 2, "*Policy is WeightedShares(1:2); it must be a policy with one value per level: 3 share counts (Levels is 3), not 2*" },
        { "Policy", o => o.Policy = PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1)), 4, "*Policy is Aging(1000 ms, 1000 ms, 1000 ms, 1000 ms); it must be a policy with one value per level: 3 maximum waits (Levels is 3), not 4*" },
        { "MaxConcurrencyPerLevel", o => o.MaxConcurrencyPerLevel = [1, 1], 2, "*MaxConcurrencyPerLevel is 2 values; it must be null (no cap) or one value per level: 3 values*" },
        { "MaxConcurrencyPerLevel", o => o.MaxConcurrencyPerLevel = [0, 1, 1], 0, "*MaxConcurrencyPerLevel?0? is 0; it must be between 1 and ThreadCount (2)*" },
        { "MaxConcurrencyPerLevel", o => o.MaxConcurrencyPerLevel = [1, 3, 1], 3, "*MaxConcurrencyPerLevel?1? is 3; it must be between 1 and ThreadCount (2)*" },
    };

    [Theory]
    [MemberData(nameof(BadOptions))]
    public void Constructor_BadOption_ThrowsNamingItTheValueAndTheRange(string option, Action<PriorityThreadPoolOptions> spoil, object value, string range)
    {
        var options = new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 3 };
        spoil(options);
        Action create = () => new PriorityThreadPool(options).Dispose();
        ArgumentOutOfRangeException ex = create.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(option).Which;
        ex.ActualValue.Should().Be(value);
        ex.Message.Should().Contain($"PriorityThreadPoolOptions.{option}");
        ex.Message.Should().Match(range);
    }

    /// <summary>The bounds themselves are allowed: the checks above reject only what is outside them.</summary>
    [Fact]
    public void Constructor_OptionsAtTheirBounds_AreAccepted()
    {
        var options = new PriorityThreadPoolOptions
        {
            ThreadCount = 1,
            Levels = PrioritySchedulerOptions.MaxLevels,
            DefaultLevel = PrioritySchedulerOptions.MaxLevels - 1,
            IdleSpinCount = PrioritySchedulerOptions.MaxIdleSpinCount,
            StallTimeout = PrioritySchedulerOptions.MaxStallTimeout,
            MaxConcurrencyPerLevel = Enumerable.Repeat(1, PrioritySchedulerOptions.MaxLevels).ToArray(),
            Policy = PriorityPolicy.Aging(Enumerable.Repeat(TimeSpan.FromDays(1), PrioritySchedulerOptions.MaxLevels).ToArray()),
        };
        var pool = new PriorityThreadPool(options);
        using var disposePool = pool.BoundedDisposal();
        pool.GetMaxConcurrency(63).Should().Be(1);
        options.IdleSpinCount = 0;
        options.StallTimeout = PrioritySchedulerOptions.MinStallTimeout;
        options.Levels = PrioritySchedulerOptions.MinLevels;
        options.DefaultLevel = 0;
        options.MaxConcurrencyPerLevel = null;
        options.Policy = PriorityPolicy.Strict;
        options.ThreadCount = PriorityThreadPoolOptions.MaxThreadCount;
        var widest = new PriorityThreadPool(options);
        using var disposeWidest = widest.BoundedDisposal();
        widest.ThreadCount.Should().Be(PriorityThreadPoolOptions.MaxThreadCount);
    }

    /// <summary>The aging policy's own values are checked when the policy is created, before any pool sees it (as for a context); the
    /// pool then checks their count against its levels (above).</summary>
    [Fact]
    public void AgingPolicy_BadBound_ThrowsBeforeThePoolIsCreated_NamingTheValueAndTheRange()
    {
        Action tooLong = () => _ = new PriorityThreadPoolOptions { Levels = 2, Policy = PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromDays(2)) };
        ArgumentOutOfRangeException ex = tooLong.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("maxWaitPerLevel[1]").Which;
        ex.ActualValue.Should().Be(TimeSpan.FromDays(2));
        ex.Message.Should().Contain("above zero and at most 1.00:00:00");
        Action zero = () => _ = new PriorityThreadPoolOptions { Levels = 2, Policy = PriorityPolicy.Aging(TimeSpan.Zero, TimeSpan.FromSeconds(1)) };
        zero.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("maxWaitPerLevel[0]");
    }

    /// <summary>An empty name is accepted and kept, on the pool as on the single loop (the name is for diagnostics only; null gives
    /// the type's name).</summary>
    [Fact]
    public async Task Name_Empty_IsAcceptedAndKept_AsOnTheSingleLoop()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Name = "" });
        await using var disposePool = pool.BoundedDisposal();
        pool.Name.Should().BeEmpty();
        (await pool.InvokeAsync(() => Task.FromResult(Thread.CurrentThread.Name)).WithTimeout("an item on the unnamed pool")).Should().Be(" #0");
        string? loopName = null;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() => loopName = PriorityContext.Current!.Name, new PriorityContextOptions { Name = "" }), "the unnamed loop");
        loopName.Should().BeEmpty();
        new PriorityThreadPoolOptions().Name.Should().BeNull();
        var unnamed = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await using var disposeUnnamed = unnamed.BoundedDisposal();
        unnamed.Name.Should().Be("PriorityThreadPool");
    }

    [Fact]
    public void Options_NullPolicyOrClock_ThrowArgumentNull()
    {
        var options = new PriorityThreadPoolOptions();
        FluentActions.Invoking(() => options.Policy = null!).Should().Throw<ArgumentNullException>();
        FluentActions.Invoking(() => options.TimeProvider = null!).Should().Throw<ArgumentNullException>();
        options.ThreadCount.Should().Be(Environment.ProcessorCount);
        options.StallTimeout.Should().Be(PrioritySchedulerOptions.DefaultStallTimeout);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    [InlineData(int.MaxValue)]
    public async Task EveryLevelTakingMember_LevelOutOfRange_ThrowsNamingTheRange(int level)
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 3 });
        await using var disposePool = pool.BoundedDisposal();
        PriorityScheduler scheduler = pool;
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

            // The same through the interface (two of its members are implemented explicitly).
            () => scheduler.Prioritize(level),
            () => scheduler.Yield(level),
            () => scheduler.GetSynchronizationContext(level),
            () => scheduler.GetScheduler(level),
            () => scheduler.GetTaskFactory(level),
            () => scheduler.GetTimeProvider(level),
            () => scheduler.InvokeAsync(() => Task.CompletedTask, level),
            () => scheduler.InvokeAsync(() => Task.FromResult(1), level),
        };
        foreach (Action call in calls)
        {
            call.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(level)).WithMessage("*between 0 and 2*")
                .Which.ActualValue.Should().Be(level);
        }
    }

    /// <summary>Priority.* on a pool thread with a level outside the pool's: the same exception as the pool's own members, and nothing
    /// starts (a root child that started would hold the pool open: Completion would not complete).</summary>
    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    public async Task StaticApi_OnAPoolThread_LevelOutOfRange_ThrowsNamingTheRange_AndStartsNothing(int level)
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = 3, Name = "levels" });
        await using var disposePool = pool.BoundedDisposal();
        bool childRan = false;
        Exception?[] caught = await pool.InvokeAsync(() => Task.FromResult(new[]
        {
            Record(() => Priority.Start(_ => Task.FromResult(childRan = true), level)),
            Record(() => Priority.Prioritize(level)),
        })).WithTimeout("the calls on a pool thread");
        foreach (Exception? ex in caught)
        {
            ArgumentOutOfRangeException outOfRange = ex.Should().BeOfType<ArgumentOutOfRangeException>().Subject;
            outOfRange.ParamName.Should().Be(nameof(level));
            outOfRange.ActualValue.Should().Be(level);
            outOfRange.Message.Should().Contain("between 0 and 2").And.Contain("PriorityThreadPool 'levels'");
        }

        pool.Complete();
        await pool.Completion.WithTimeout("the pool, which no child holds open");
        childRan.Should().BeFalse();
        pool.GetSnapshot().OutstandingOperations.Should().Be(0);
    }

    [Fact]
    public async Task StaticApi_OnAPoolThread_NullChildOrDelayTooLong_Throws()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await using var disposePool = pool.BoundedDisposal();
        Exception?[] caught = await pool.InvokeAsync(() => Task.FromResult(new[]
        {
            Record(() => Priority.Start(null!)),
            Record(() => Priority.Start(null!, 0)),
            Record(() => Priority.Delay(TimeSpan.FromMilliseconds(uint.MaxValue))),
        })).WithTimeout("the calls on a pool thread");
        caught[0].Should().BeOfType<ArgumentNullException>().Which.ParamName.Should().Be("child");
        caught[1].Should().BeOfType<ArgumentNullException>().Which.ParamName.Should().Be("child");
        ArgumentOutOfRangeException delay = caught[2].Should().BeOfType<ArgumentOutOfRangeException>().Subject;
        delay.ParamName.Should().Be("delay");
        delay.ActualValue.Should().Be(TimeSpan.FromMilliseconds(uint.MaxValue));
        delay.Message.Should().Contain("PriorityThreadPool").And.Contain("between 0 and 4294967294 ms, or Timeout.InfiniteTimeSpan");
    }

    /// <summary>The pool's timers take what <see cref="TimeProvider.System"/> takes: a due time or period below -1 ms (other than
    /// infinite) or above 4294967294 ms throws, naming the value, the range and the pool.</summary>
    [Fact]
    public async Task Timers_DueTimeOrPeriodOutOfRange_ThrowNamingTheValueAndTheRange()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Name = "timers" });
        await using var disposePool = pool.BoundedDisposal();
        TimeSpan negative = TimeSpan.FromMilliseconds(-2);
        TimeSpan tooLong = TimeSpan.FromMilliseconds(uint.MaxValue);
        var calls = new (string Parameter, TimeSpan Value, Action Call)[]
        {
            ("dueTime", negative, () => pool.TimeProvider.CreateTimer(_ => { }, null, negative, Timeout.InfiniteTimeSpan)),
            ("period", negative, () => pool.GetTimeProvider(1).CreateTimer(_ => { }, null, TimeSpan.Zero, negative)),
            ("dueTime", tooLong, () => pool.GetTimeProvider(0).CreateTimer(_ => { }, null, tooLong, Timeout.InfiniteTimeSpan)),
        };
        foreach ((string parameter, TimeSpan value, Action call) in calls)
        {
            ArgumentOutOfRangeException ex = call.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(parameter).Which;
            ex.ActualValue.Should().Be(value);
            ex.Message.Should().Contain("PriorityThreadPool 'timers'").And.Contain("between 0 and 4294967294 ms, or Timeout.InfiniteTimeSpan");
        }

        pool.ArmedTimerCount.Should().Be(0, "no timer was armed");
    }

    /// <summary>InvokeAsync on a finished pool does not throw: the returned task faults with ObjectDisposedException naming the pool,
    /// and the work never runs (as on the single loop).</summary>
    [Fact]
    public async Task InvokeAsync_AfterTheEnd_FaultsTheTask_AndTheWorkNeverRuns()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Name = "ended" });
        await pool.DisposeOrFailAsync();
        bool ran = false;
        Task late = pool.InvokeAsync(() => Task.FromResult(ran = true));
        await FluentActions.Awaiting(() => late.WithTimeout("the late work's task")).Should().ThrowAsync<ObjectDisposedException>().WithMessage("*ended*");
        ran.Should().BeFalse();
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(2)]
    public async Task GetSharesAndSetShares_LevelOutOfRange_ThrowNamingTheRange(int level)
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Policy = PriorityPolicy.WeightedShares(1, 3) });
        await using var disposePool = pool.BoundedDisposal();
        foreach (Action call in new Action[] { () => pool.GetShares(level), () => pool.SetShares(level, 5) })
        {
            call.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(level)).WithMessage("*between 0 and 1*")
                .Which.ActualValue.Should().Be(level);
        }

        pool.GetShares(0).Should().Be(1, "nothing was changed");
        pool.GetShares(1).Should().Be(3);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(PriorityPolicy.MaxShares + 1)]
    public async Task SetShares_SharesOutOfRange_ThrowsNamingTheValueAndTheRange_AndKeepsTheOldValue(int shares)
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Policy = PriorityPolicy.WeightedShares(1, 3) });
        await using var disposePool = pool.BoundedDisposal();
        Action set = () => pool.SetShares(1, shares);
        set.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(shares)).WithMessage("*level 1*between 1 and 10000*")
            .Which.ActualValue.Should().Be(shares);
        pool.GetShares(1).Should().Be(3);
    }

    /// <summary>GetShares and SetShares on a pool whose policy is not weighted shares: InvalidOperationException naming the pool, its
    /// policy and how to choose shares, before the arguments are looked at.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task GetSharesAndSetShares_OnAPoolWithoutShares_ThrowNamingThePolicy(bool aging)
    {
        PriorityPolicy policy = aging ? PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1)) : PriorityPolicy.Strict;
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Policy = policy, Name = "no shares" });
        await using var disposePool = pool.BoundedDisposal();
        foreach (Action call in new Action[] { () => pool.GetShares(0), () => pool.SetShares(0, 2), () => pool.GetShares(-1), () => pool.SetShares(5, 0) })
        {
            call.Should().Throw<InvalidOperationException>()
                .WithMessage($"*PriorityThreadPool 'no shares' runs {policy}*PriorityThreadPoolOptions.Policy = PriorityPolicy.WeightedShares(...)*");
        }
    }

    /// <summary>A task queued on a finished pool's scheduler: the task faults (TaskSchedulerException around ObjectDisposedException
    /// naming the pool, its state and the level) and StartNew throws, as on the single loop; the task never runs.</summary>
    [Fact]
    public async Task TaskScheduler_QueueAfterTheEnd_FaultsTheTaskNamingThePool()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Name = "ended" });
        await pool.DisposeOrFailAsync();
        bool ran = false;
        Action start = () => pool.GetTaskFactory(1).StartNew(() => ran = true);
        start.Should().Throw<TaskSchedulerException>().WithInnerException<ObjectDisposedException>()
            .WithMessage("*PriorityThreadPool 'ended' has finished (Completed)*level 1*");
        ran.Should().BeFalse();
    }

    [Fact]
    public async Task NullDelegates_ThrowArgumentNull()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await using var disposePool = pool.BoundedDisposal();
        Action invoke = () => pool.InvokeAsync(null!);
        invoke.Should().Throw<ArgumentNullException>();
        Action invokeTyped = () => pool.InvokeAsync<int>(null!, 0);
        invokeTyped.Should().Throw<ArgumentNullException>();
        Action invokeTypedAtDefault = () => pool.InvokeAsync<int>(null!);
        invokeTypedAtDefault.Should().Throw<ArgumentNullException>();
        Action invokeAtLevel = () => pool.InvokeAsync(null!, 0);
        invokeAtLevel.Should().Throw<ArgumentNullException>();
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).Post(null!, null)).Should().Throw<ArgumentNullException>().WithParameterName("d");
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).Send(null!, null)).Should().Throw<ArgumentNullException>().WithParameterName("d");
        FluentActions.Invoking(() => pool.GetTimeProvider(0).CreateTimer(null!, null, TimeSpan.Zero, TimeSpan.Zero)).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public async Task InvokeAsync_DelegateReturnsNull_FaultsTheTask()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await using var disposePool = pool.BoundedDisposal();
        await FluentActions.Awaiting(() => pool.InvokeAsync(() => null!).WithTimeout("the task")).Should().ThrowAsync<InvalidOperationException>();
    }

    [Fact]
    public async Task Delay_OutOfRange_Throws_AndSharesOutOfRangeThrow()
    {
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 2, Policy = PriorityPolicy.WeightedShares(1, 1) });
        await using var disposePool = pool.BoundedDisposal();
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
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1 });
        await using var disposePool = pool.BoundedDisposal();
        pool.Complete();
        await pool.Completion.WithTimeout("the pool");
        FluentActions.Invoking(() => pool.GetSynchronizationContext(0).OperationCompleted()).Should().Throw<InvalidOperationException>();
    }

    /// <summary>Every Priority.* member off both schedulers: the message names the member and both schedulers, how to get onto each,
    /// and what the caller runs on instead (the type of SynchronizationContext.Current, or none). A pool user is told about the pool.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void StaticApi_OutsideBothSchedulers_ThrowsNamingBothAndWhatWasFound(bool foreignContext)
    {
        var calls = new (string Member, Func<Exception?> Call)[]
        {
            ("Prioritize", () => Record(() => Priority.Prioritize(1))),
            ("Yield", () => Record(() => Priority.Yield())),
            ("Checkpoint", () => Record(() => Priority.Checkpoint())),
            ("ShouldYield", () => Record(() => Priority.ShouldYield)),
            ("Delay", () => Record(() => Priority.Delay(TimeSpan.FromSeconds(1)))),
#pragma warning disable PA0003, PA0004 // off both schedulers on purpose: the test checks the error there
            ("Start", () => Record(() => Priority.Start(_ => Task.CompletedTask))),
            ("Start", () => Record(() => Priority.Start(_ => Task.CompletedTask, 0))),
#pragma warning restore PA0003, PA0004
            ("CurrentLevel", () => Record(() => Priority.CurrentLevel)),
        };
        var found = new List<(string Member, Exception? Caught)>();
        bool schedulerIsNull = false;
        TestTimeout.OnOwnThread(
            () =>
            {
                SynchronizationContext.SetSynchronizationContext(foreignContext ? new ForeignSynchronizationContext() : null);
                found.AddRange(calls.Select(c => (c.Member, c.Call())));
                schedulerIsNull = Priority.CurrentScheduler is null && PriorityThreadPool.Current is null && PriorityContext.Current is null;
            },
            "the calls off both schedulers");

        schedulerIsNull.Should().BeTrue();
        string what = foreignContext ? $"SynchronizationContext.Current is a {typeof(ForeignSynchronizationContext).FullName}" : "SynchronizationContext.Current is null";
        foreach ((string member, Exception? caught) in found)
        {
            caught.Should().BeOfType<InvalidOperationException>().Which.Message.Should()
                .Contain($"Priority.{member} can only be used by code running on a PriorityContext or a PriorityThreadPool")
                .And.Contain(what)
                .And.Contain("PriorityContext.Run(...)").And.Contain("PriorityContextThread").And.Contain("pool.InvokeAsync(...)");
        }
    }

    /// <summary>The members only the single loop has, called on a pool thread: the message says the caller runs on that pool (name and
    /// level) and what to use there instead.</summary>
    [Fact]
    public async Task LoopOnlyMembers_OnAPoolThread_NameThePoolAndWhatToUseThere()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "the loop" });
        await using var disposeLoop = loop.BoundedDisposal();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 1, Levels = 3, Name = "the pool" });
        await using var disposePool = pool.BoundedDisposal();
        Exception?[] caught = await pool.InvokeAsync(
            () => Task.FromResult(new[]
            {
                Record(() => _ = PriorityContext.CurrentLevel),
                Record(() => loop.Context.Checkpoint()),
            }),
            level: 2).WithTimeout("the calls on a pool thread");

        const string OnThePool = "*can only be used inside a PriorityContext, and the calling code runs on the PriorityThreadPool 'the pool' (at level 2) instead*";
        caught[0].Should().BeOfType<InvalidOperationException>().Which.Message.Should().Match("PriorityContext.CurrentLevel" + OnThePool + "Priority.CurrentLevel reads the level on either scheduler*");
        caught[1].Should().BeOfType<InvalidOperationException>().Which.Message.Should().Match("context.Checkpoint (of the PriorityContext 'the loop')" + OnThePool + "Priority.Checkpoint asks about the scheduler the caller runs on*");
    }

    private static Exception? Record(Action act) => Record(() =>
    {
        act();
        return 0;
    });

    private static Exception? Record<T>(Func<T> act)
    {
        try
        {
            _ = act();
            return null;
        }
        catch (Exception ex)
        {
            return ex;
        }
    }

    private sealed class ForeignSynchronizationContext : SynchronizationContext;
}
