using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Migration;

/// <summary>
/// Nito.AsyncEx's own unit tests of <c>AsyncContext</c> and <c>AsyncContextThread</c>, rewritten here test by test, run unchanged on
/// both libraries (the two derived classes): what an AsyncEx user relies on and keeps after switching. The tests where the libraries
/// differ (a task started after the end, <c>AsyncContext.Id</c>) are in <see cref="MigrationDifferenceTests"/>, which asserts each
/// library's behaviour. Tests that run a loop on the calling thread run it on a thread of their own (xunit has its own context).
/// </summary>
public abstract class PortedAsyncContextTests(ContextLibrary library)
{
    protected ContextLibrary Library { get; } = library;

    // ---- Run ----------------------------------------------------------------------------------------------------------------

    [Fact]
    public void Run_SyncFunc_RunsOnTheCallingThread() => TestTimeout.OnOwnThread(() =>
    {
        int caller = Environment.CurrentManagedThreadId;
        Library.Run(() => Environment.CurrentManagedThreadId).Should().Be(caller);
    }, nameof(Run_SyncFunc_RunsOnTheCallingThread));

    [Fact]
    public void Run_AsyncVoidAction_ReturnsOnlyAfterItResumed() => TestTimeout.OnOwnThread(() =>
    {
        bool resumed = false;
        Library.Run((Action)(async () =>
        {
            await Task.Yield();
            resumed = true;
        }));
        resumed.Should().BeTrue();
    }, nameof(Run_AsyncVoidAction_ReturnsOnlyAfterItResumed));

    [Fact]
    public void Run_SyncFuncThatStartsAsyncVoid_ReturnsItsValueAfterTheAsyncVoidResumed() => TestTimeout.OnOwnThread(() =>
    {
        bool resumed = false;
        int result = Library.Run(() =>
        {
            Action fireAndForget = async () =>
            {
                await Task.Yield();
                resumed = true;
            };
            fireAndForget();
            return 13;
        });
        resumed.Should().BeTrue();
        result.Should().Be(13);
    }, nameof(Run_SyncFuncThatStartsAsyncVoid_ReturnsItsValueAfterTheAsyncVoidResumed));

    [Fact]
    public void Run_AsyncTask_ReturnsAfterItCompleted() => TestTimeout.OnOwnThread(() =>
    {
        bool resumed = false;
        Library.Run(async () =>
        {
            await Task.Yield();
            resumed = true;
        });
        resumed.Should().BeTrue();
    }, nameof(Run_AsyncTask_ReturnsAfterItCompleted));

    [Fact]
    public void Run_AsyncTaskWithResult_ReturnsItsResult() => TestTimeout.OnOwnThread(() =>
    {
        bool resumed = false;
        int result = Library.Run(async () =>
        {
            await Task.Yield();
            resumed = true;
            return 17;
        });
        resumed.Should().BeTrue();
        result.Should().Be(17);
    }, nameof(Run_AsyncTaskWithResult_ReturnsItsResult));

    [Fact]
    public void Run_SyncEntryThrows_RethrowsTheExceptionUnwrapped() => TestTimeout.OnOwnThread(() =>
    {
        Action run = () => Library.Run(() => throw new NotImplementedException());
        run.Should().ThrowExactly<NotImplementedException>();
    }, nameof(Run_SyncEntryThrows_RethrowsTheExceptionUnwrapped));

    [Fact]
    public void Run_AsyncEntryThrowsAfterAnAwait_RethrowsTheExceptionUnwrapped() => TestTimeout.OnOwnThread(() =>
    {
        Action run = () => Library.Run(async () =>
        {
            await Task.Yield();
            throw new NotImplementedException();
        });
        run.Should().ThrowExactly<NotImplementedException>();
    }, nameof(Run_AsyncEntryThrowsAfterAnAwait_RethrowsTheExceptionUnwrapped));

    [Fact]
    public void Run_PostedCallbackThrows_RunRethrowsIt() => TestTimeout.OnOwnThread(() =>
    {
        Action run = () => Library.Run(async () =>
        {
            SynchronizationContext.Current!.Post(_ => throw new NotImplementedException(), null);
            await Task.Yield();
        });
        run.Should().ThrowExactly<NotImplementedException>();
    }, nameof(Run_PostedCallbackThrows_RunRethrowsIt));

    // ---- Current, SynchronizationContext, TaskScheduler -------------------------------------------------------------------

    [Fact]
    public void Current_OutsideAnyContext_IsNull() => TestTimeout.OnOwnThread(
        () => Library.Current.Should().BeNull(),
        nameof(Current_OutsideAnyContext_IsNull));

    [Fact]
    public void Current_InsideRun_IsTheContextWhoseSynchronizationContextIsCurrent() => TestTimeout.OnOwnThread(() =>
    {
        (object? current, SynchronizationContext? synchronizationContext) = Library.Run(() => (Library.Current, SynchronizationContext.Current));
        current.Should().NotBeNull();
        synchronizationContext.Should().BeSameAs(Library.SynchronizationContextOf(current!));
    }, nameof(Current_InsideRun_IsTheContextWhoseSynchronizationContextIsCurrent));

    [Fact]
    public async Task Current_InsideATaskOfTheThreadsFactory_IsThatThreadsContext()
    {
        using ContextThread thread = Library.StartThread();
        object? observed = await thread.Run(() => Library.Current).WithTimeout("the task");
        observed.Should().BeSameAs(thread.Context);
    }

    [Fact]
    public async Task SynchronizationContextCurrent_InsideATaskOfTheFactory_IsTheContextsSynchronizationContext()
    {
        using ContextThread thread = Library.StartThread();
        SynchronizationContext? observed = await thread.Run(() => SynchronizationContext.Current).WithTimeout("the task");
        observed.Should().BeSameAs(Library.SynchronizationContextOf(thread.Context));
    }

    [Fact]
    public async Task TaskSchedulerCurrent_InsideATaskOfTheFactory_IsTheThreadPoolScheduler()
    {
        // Both factories hide their scheduler: see MigrationDifferenceTests for what that means for nested tasks.
        using ContextThread thread = Library.StartThread();
        TaskScheduler observed = await thread.Run(() => TaskScheduler.Current).WithTimeout("the task");
        observed.Should().BeSameAs(TaskScheduler.Default);
    }

    [Fact]
    public void Scheduler_MaximumConcurrencyLevel_IsOne()
    {
        using ContextThread thread = Library.StartThread();
        Library.SchedulerOf(thread.Context).MaximumConcurrencyLevel.Should().Be(1);
    }

    // ---- Send, CreateCopy -------------------------------------------------------------------------------------------------

    [Fact]
    public async Task Send_FromAnotherThread_HasRunWhenItReturns()
    {
        using ContextThread thread = Library.StartThread();
        SynchronizationContext context = (await thread.Run(() => SynchronizationContext.Current).WithTimeout("the task"))!;
        int value = 0;
        TestTimeout.OnOwnThread(() => context.Send(_ => value = 13, null), "the Send"); // it blocks without a timeout: bounded here
        value.Should().Be(13);
    }

    [Fact]
    public async Task Send_FromTheLoopThread_RunsInline()
    {
        using ContextThread thread = Library.StartThread();
        int value = 0;
        int inside = await thread.Run(() =>
        {
            SynchronizationContext.Current!.Send(_ => value = 13, null);
            return value;
        }).WithTimeout("the task");
        inside.Should().Be(13);
    }

    [Fact]
    public void SynchronizationContext_CopyOfItself_IsEqualWithTheSameHashCode() => TestTimeout.OnOwnThread(() =>
    {
        SynchronizationContext original = Library.Run(() => SynchronizationContext.Current)!;
        SynchronizationContext copy = original.CreateCopy();
        copy.GetHashCode().Should().Be(original.GetHashCode());
        copy.Equals(original).Should().BeTrue();
        original.Equals(new SynchronizationContext()).Should().BeFalse();
    }, nameof(SynchronizationContext_CopyOfItself_IsEqualWithTheSameHashCode));

    // ---- The context thread -----------------------------------------------------------------------------------------------

    [Fact]
    public async Task Thread_RunsWorkOnAThreadOfItsOwn()
    {
        ContextThread thread = Library.StartThread();
        int loopThread = await thread.Run(() => Environment.CurrentManagedThreadId).WithTimeout("the task");
        loopThread.Should().NotBe(Environment.CurrentManagedThreadId);
        await thread.JoinAsync().WithTimeout("the join");
    }

    [Fact]
    public async Task Thread_AsyncWork_ResumesOnTheLoopThread()
    {
        ContextThread thread = Library.StartThread();
        int before = -1;
        int after = -2;
        await thread.RunAsync(async () =>
        {
            before = Environment.CurrentManagedThreadId;
            await Task.Yield();
            after = Environment.CurrentManagedThreadId;
        }).WithTimeout("the async work");
        after.Should().Be(before);
        await thread.JoinAsync().WithTimeout("the join");
    }

    [Fact]
    public async Task Thread_Join_StopsTheLoop()
    {
        ContextThread thread = Library.StartThread();
        await thread.Run(() => { }).WithTimeout("the task");
        Task join = thread.JoinAsync();
        await join.WithTimeout("the join");
        join.IsCompletedSuccessfully.Should().BeTrue();
    }
}
