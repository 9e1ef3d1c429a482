using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.BadInput;

/// <summary>
/// Every public entry point, given a bad argument or called in a state where it cannot work, throws the documented exception, and the
/// message names the bad value and what is allowed. One test per entry point (theories cover the variants of one entry point).
/// </summary>
public sealed class BadInputTests
{
    private static readonly PriorityContext s_context = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bad-input" }).Context;

    public static TheoryData<int> BadLevels => new() { -1, 3, int.MinValue, int.MaxValue };

    // ---- Levels ---------------------------------------------------------------------------------------------------------

    [Theory]
    [MemberData(nameof(BadLevels))]
    public void GetSynchronizationContext_LevelOutOfRange_Throws(int level) =>
        AssertLevelOutOfRange(() => s_context.GetSynchronizationContext(level), level);

    [Theory]
    [MemberData(nameof(BadLevels))]
    public void GetScheduler_LevelOutOfRange_Throws(int level) =>
        AssertLevelOutOfRange(() => s_context.GetScheduler(level), level);

    [Theory]
    [MemberData(nameof(BadLevels))]
    public void GetTaskFactory_LevelOutOfRange_Throws(int level) =>
        AssertLevelOutOfRange(() => s_context.GetTaskFactory(level), level);

    [Theory]
    [MemberData(nameof(BadLevels))]
    public void ContextPrioritize_LevelOutOfRange_Throws(int level) =>
        AssertLevelOutOfRange(() => s_context.Prioritize(level), level);

    [Theory]
    [MemberData(nameof(BadLevels))]
    public void ContextYield_LevelOutOfRange_Throws(int level) =>
        AssertLevelOutOfRange(() => s_context.Yield(level), level);

    [Theory]
    [MemberData(nameof(BadLevels))]
    public void PriorityPrioritize_InsideContext_LevelOutOfRange_Throws(int level)
    {
        Exception? caught = null;
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    caught = Record(() => Priority.Prioritize(level));
                },
                new PriorityContextOptions { Levels = 3 }),
            nameof(PriorityPrioritize_InsideContext_LevelOutOfRange_Throws));
        AssertLevelOutOfRange(caught, level);
    }

    // ---- Outside a context ----------------------------------------------------------------------------------------------

    [Fact]
    public void PriorityPrioritize_OutsideContext_ThrowsSayingHowToGetOne() =>
        AssertNotInContext(() => Priority.Prioritize(0), "Prioritize");

    [Fact]
    public void PriorityYield_OutsideContext_ThrowsSayingHowToGetOne() =>
        AssertNotInContext(() => Priority.Yield(), "Yield");

    [Fact]
    public void CurrentLevel_OutsideContext_ThrowsSayingHowToGetOne() =>
        AssertNotInContext(() => PriorityContext.CurrentLevel, "CurrentLevel");

    // ---- Null delegates -------------------------------------------------------------------------------------------------

    [Fact]
    public void RunAction_NullEntry_Throws() => AssertNull(() => PriorityContext.Run((Action)null!), "entry");

    [Fact]
    public void RunFuncTask_NullEntry_Throws() => AssertNull(() => PriorityContext.Run((Func<Task>)null!), "entry");

    [Fact]
    public void RunFuncTaskOfT_NullEntry_Throws() => AssertNull(() => PriorityContext.Run((Func<Task<int>>)null!), "entry");

    [Fact]
    public void Post_NullCallback_Throws() => AssertNull(() => s_context.GetSynchronizationContext(0).Post(null!, null), "d");

    [Fact]
    public void Send_NullCallback_Throws() => AssertNull(() => s_context.GetSynchronizationContext(0).Send(null!, null), "d");

    [Fact]
    public void AwaiterOnCompleted_NullContinuation_Throws() =>
        AssertNull(() => s_context.Yield(0).GetAwaiter().OnCompleted(null!), "continuation");

    [Fact]
    public void AwaiterUnsafeOnCompleted_NullContinuation_Throws() =>
        AssertNull(() => s_context.Yield(0).GetAwaiter().UnsafeOnCompleted(null!), "continuation");

    [Fact]
    public void Run_EntryReturnsNullTask_ThrowsInvalidOperation()
    {
        Exception? caught = null;
        TestTimeout.OnOwnThread(() => caught = Record(() => PriorityContext.Run(() => (Task)null!)), nameof(Run_EntryReturnsNullTask_ThrowsInvalidOperation));
        caught.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("returned null");
    }

    // ---- Options ----------------------------------------------------------------------------------------------------------

    public static TheoryData<string, object, string> BadOptions => new()
    {
        { nameof(PrioritySchedulerOptions.Levels), 0, "between 1 and 64" },
        { nameof(PrioritySchedulerOptions.Levels), 65, "between 1 and 64" },
        { nameof(PrioritySchedulerOptions.DefaultLevel), -1, "between 0 and 2" },
        { nameof(PrioritySchedulerOptions.DefaultLevel), 3, "between 0 and 2" },
        { nameof(PrioritySchedulerOptions.IdleSpinCount), -1, "between 0 and 10000" },
        { nameof(PrioritySchedulerOptions.IdleSpinCount), 10_001, "between 0 and 10000" },
        { nameof(PrioritySchedulerOptions.StallTimeout), TimeSpan.Zero, "null (off) or between" },
        { nameof(PrioritySchedulerOptions.StallTimeout), TimeSpan.FromMilliseconds(-1), "null (off) or between" },
        { nameof(PrioritySchedulerOptions.StallTimeout), TimeSpan.FromMilliseconds(9), "null (off) or between" },
        { nameof(PrioritySchedulerOptions.StallTimeout), TimeSpan.FromDays(2), "null (off) or between" },
    };

    [Theory]
    [MemberData(nameof(BadOptions))]
    public void PriorityContextThreadConstructor_BadOption_ThrowsNamingOptionValueAndRange(string option, object value, string allowed)
    {
        Exception? caught = Record(() => _ = new PriorityContextThread(MakeOptions(option, value)));
        AssertBadOption(caught, option, value, allowed);
    }

    [Theory]
    [MemberData(nameof(BadOptions))]
    public void Run_BadOption_ThrowsNamingOptionValueAndRange(string option, object value, string allowed)
    {
        bool entered = false;
        Exception? caught = null;
        TestTimeout.OnOwnThread(() => caught = Record(() => PriorityContext.Run(() => entered = true, MakeOptions(option, value))), "Run");
        AssertBadOption(caught, option, value, allowed);
        entered.Should().BeFalse("options are rejected before anything runs");
    }

    // ---- State ------------------------------------------------------------------------------------------------------------

    [Fact]
    public void Run_NestedOnThreadAlreadyRunningALoop_ThrowsNamingTheRunningContext()
    {
        Exception? caught = null;
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () => caught = Record(() => PriorityContext.Run(() => { })),
                new PriorityContextOptions { Name = "outer" }),
            nameof(Run_NestedOnThreadAlreadyRunningALoop_ThrowsNamingTheRunningContext));
        caught.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("'outer'").And.Contain("already running");
    }

    [Fact]
    public async Task Run_OnTheLoopThreadOfAPriorityContextThread_ThrowsNamingTheRunningContext()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "thread-loop" });
        await using var disposeLoop = loop.BoundedDisposal();
        Exception? caught = await loop.Context.GetTaskFactory(0).StartNew(() => Record(() => PriorityContext.Run(() => { }))).WithTimeout("the nested Run");
        caught.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("'thread-loop'").And.Contain("await the work instead");
    }

    [Fact]
    public async Task Send_ToFinishedContext_ThrowsObjectDisposedNamingContextAndAlternative()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "finished-send" });
        await loop.DisposeOrFailAsync();
        int ran = 0;
        Exception? caught = Record(() => loop.Context.GetSynchronizationContext(0).Send(_ => ran++, null));
        caught.Should().BeOfType<ObjectDisposedException>().Which.Message.Should().Contain("'finished-send'").And.Contain("Post");
        ran.Should().Be(0);
    }

    [Fact]
    public async Task Prioritize_FromOtherThreadOnFinishedContext_ThrowsObjectDisposedNamingContextAndLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "finished-prioritize" });
        await loop.DisposeOrFailAsync();
        Func<Task> hop = () => HopAsync().WithTimeout("the hop onto the finished loop");
        (await hop.Should().ThrowAsync<ObjectDisposedException>()).Which.Message.Should().Contain("'finished-prioritize'").And.Contain("level 1");

        async Task HopAsync() => await loop.Context.Prioritize(1);
    }

    [Fact]
    public async Task Post_ToFinishedContext_DoesNotThrow_CountedAndReported()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "finished-post" });
        await loop.DisposeOrFailAsync();
        var dropped = new List<WorkDroppedEventArgs>();
        loop.Context.WorkDropped += (_, e) => dropped.Add(e);
        object state = new();
        loop.Context.GetSynchronizationContext(2).Post(_ => { }, state);
        dropped.Should().ContainSingle().Which.Should().Match<WorkDroppedEventArgs>(d => d.Level == 2 && d.State == state && d.Reason == DropReason.PostedAfterCompletion);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(1);
    }

    [Fact]
    public async Task StartNew_OnFinishedContext_TaskFaultsWithObjectDisposed_NeverHangs()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "finished-task" });
        await loop.DisposeOrFailAsync();
        int ran = 0;
        Exception? caught = Record(() => loop.Context.GetTaskFactory(0).StartNew(() => ran++));
        caught.Should().BeOfType<TaskSchedulerException>().Which.InnerException.Should().BeOfType<ObjectDisposedException>()
            .Which.Message.Should().Contain("'finished-task'");
        ran.Should().Be(0);
    }

    [Fact]
    public async Task OperationCompleted_WithoutMatchingOperationStarted_ThrowsAndLeavesTheCountAlone()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "unmatched" });
        await loop.DisposeOrFailAsync();
        Exception? caught = Record(() => loop.Context.GetSynchronizationContext(0).OperationCompleted());
        caught.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("'unmatched'").And.Contain("OperationStarted");
        loop.Context.GetSnapshot().OutstandingOperations.Should().Be(0);
    }

    [Fact]
    public async Task Dispose_Twice_AndCompleteAfterDispose_AreNoOps()
    {
        var loop = new PriorityContextThread();
        await loop.DisposeOrFailAsync();
        loop.Dispose();
        loop.Complete();
        await loop.DisposeOrFailAsync();
        loop.Context.State.Should().Be(PrioritySchedulerState.Completed);
    }

    // ---- Helpers ----------------------------------------------------------------------------------------------------------

    private static PriorityContextOptions MakeOptions(string option, object value)
    {
        var options = new PriorityContextOptions { Levels = 3 };
        typeof(PriorityContextOptions).GetProperty(option)!.SetValue(options, value);
        return options;
    }

    private static void AssertBadOption(Exception? caught, string option, object value, string allowed)
    {
        ArgumentOutOfRangeException ex = caught.Should().BeOfType<ArgumentOutOfRangeException>().Subject;
        ex.ParamName.Should().Be(option);
        ex.ActualValue.Should().Be(value);
        ex.Message.Should().Contain("PriorityContextOptions." + option).And.Contain(allowed).And.Contain(value.ToString());
    }

    private static void AssertLevelOutOfRange(Action act, int level) => AssertLevelOutOfRange(Record(act), level);

    private static void AssertLevelOutOfRange(Func<object> act, int level) => AssertLevelOutOfRange(Record(() => act()), level);

    private static void AssertLevelOutOfRange(Exception? caught, int level)
    {
        ArgumentOutOfRangeException ex = caught.Should().BeOfType<ArgumentOutOfRangeException>().Subject;
        ex.ParamName.Should().Be("level");
        ex.ActualValue.Should().Be(level);
        ex.Message.Should().Contain("between 0 and 2").And.Contain(level.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }

    private static void AssertNotInContext(Func<object> act, string operation)
    {
        Exception? caught = null;
        TestTimeout.OnOwnThread(() => caught = Record(() => act()), operation);
        // Both schedulers named, how to get onto each, and what the caller runs on instead (a thread of its own: none).
        caught.Should().BeOfType<InvalidOperationException>().Which.Message.Should()
            .Contain(operation).And.Contain("PriorityContext.Run").And.Contain("PriorityContextThread").And.Contain("PriorityThreadPool")
            .And.Contain("SynchronizationContext.Current is null");
    }

    private static void AssertNull(Action act, string parameter) =>
        Record(act).Should().BeOfType<ArgumentNullException>().Which.ParamName.Should().Be(parameter);

    private static Exception? Record(Action act)
    {
        try
        {
            act();
            return null;
        }
        catch (Exception ex)
        {
            return ex;
        }
    }
}
