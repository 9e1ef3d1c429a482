using Nito.AsyncEx;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Migration;

/// <summary>
/// Every behaviour docs/migrating-from-asynccontext.md describes, run on both libraries: the same code, and what each library does
/// with it. The AsyncEx tracker's open complaints are the checklist (#181, #185, #279, late work dropped silently). A
/// <see cref="TheoryAttribute"/> over both libraries means "the same on both"; a <see cref="FactAttribute"/> asserting each library's
/// outcome means "different".
/// </summary>
public class MigrationDifferenceTests
{
    public static TheoryData<string> BothLibraries => new() { "AsyncEx", "PriorityAsync" };

    private static ContextLibrary Library(string name) => name == "AsyncEx" ? ContextLibrary.AsyncEx : ContextLibrary.PriorityAsync;

    // ---- The scheduler is hidden inside factory tasks; the level travels with await ----------------------------------------

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task NestedStartNewAndContinueWith_WithoutAScheduler_RunOnThePoolNotOnTheLoop(string name)
    {
        using ContextThread thread = Library(name).StartThread();
        int loopThread = await thread.Run(() => Environment.CurrentManagedThreadId).WithTimeout("the loop thread id");
        (Task<int> startNew, Task<int> continueWith) = await thread.Run(() => (
            Task.Factory.StartNew(() => Environment.CurrentManagedThreadId),
            Task.CompletedTask.ContinueWith(_ => Environment.CurrentManagedThreadId))).WithTimeout("the outer task");
        (await startNew.WithTimeout("the nested StartNew")).Should().NotBe(loopThread);
        (await continueWith.WithTimeout("the nested ContinueWith")).Should().NotBe(loopThread);
    }

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task AwaitInsideAFactoryTask_ResumesOnTheLoop(string name)
    {
        using ContextThread thread = Library(name).StartThread();
        int loopThread = await thread.Run(() => Environment.CurrentManagedThreadId).WithTimeout("the loop thread id");
        Task<int> resumedOn = await thread.Run<Task<int>>(async () =>
        {
            await Task.Delay(1); // completes on the thread pool (no clock to fake): the point is the resumption through the context
            return Environment.CurrentManagedThreadId;
        }).WithTimeout("the outer task");
        (await resumedOn.WithTimeout("the awaiting task")).Should().Be(loopThread);
    }

    [Fact]
    public async Task NestedWork_AskingForTheContextsScheduler_RunsOnTheLoop_AndOnPriorityAsyncAtTheLevelAskedFor()
    {
        using var asyncEx = new AsyncContextThread();
        int asyncExLoop = await asyncEx.Factory.Run(() => Environment.CurrentManagedThreadId).WithTimeout("the AsyncEx loop id");
        Task<int> asyncExNested = await asyncEx.Factory.StartNew(() => Task.Factory.StartNew(
            () => Environment.CurrentManagedThreadId, CancellationToken.None, TaskCreationOptions.None, AsyncContext.Current!.Scheduler)).WithTimeout("the outer task");
        (await asyncExNested.WithTimeout("the nested AsyncEx task")).Should().Be(asyncExLoop);

        var priority = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposePriority = priority.BoundedDisposal();
        Task<(int Thread, int Level)> priorityNested = await priority.Context.GetTaskFactory(0).StartNew(
            () => PriorityContext.Current!.GetTaskFactory(2).StartNew(() => (Environment.CurrentManagedThreadId, PriorityContext.CurrentLevel))).WithTimeout("the outer task");
        (int thread, int level) = await priorityNested.WithTimeout("the nested PriorityAsync task");
        thread.Should().Be(priority.ManagedThreadId);
        level.Should().Be(2);

        int levelAfterAwait = await priority.Context.GetTaskFactory(2).StartNew(async () =>
        {
#pragma warning disable PA0001 // stands for I/O that completes on the thread pool, on both libraries alike
            await Task.Delay(1);
#pragma warning restore PA0001
            return PriorityContext.CurrentLevel;
        }).Unwrap().WithTimeout("the awaiting task");
        levelAfterAwait.Should().Be(2, "the level is carried by await, not by TaskScheduler.Current");
    }

    // ---- Work that arrives after the end ----------------------------------------------------------------------------------

    [Fact]
    public async Task TaskStartedAfterTheEnd_AsyncExNeverRunsIt_PriorityAsyncThrowsAtTheCallSiteAndFaultsIt()
    {
        var asyncEx = new AsyncContextThread();
        await asyncEx.JoinAsync().WithTimeout("the AsyncEx join");
        bool asyncExRan = false;
        Task asyncExLate = asyncEx.Factory.Run(() => { asyncExRan = true; });
        // The loop thread has ended: nothing can ever run the task, and nothing says so.
        asyncExLate.IsCompleted.Should().BeFalse();
        asyncExRan.Should().BeFalse();

        var priority = new PriorityContextThread();
        await priority.DisposeAsync().AsTask().WithTimeout("the PriorityAsync loop to finish");
        bool priorityRan = false;
        Action startNew = () => priority.Context.GetTaskFactory(0).StartNew(() => { priorityRan = true; });
        startNew.Should().ThrowExactly<TaskSchedulerException>().WithInnerExceptionExactly<ObjectDisposedException>();
        Task invoked = priority.Context.InvokeAsync(() =>
        {
            priorityRan = true;
            return Task.CompletedTask;
        });
        invoked.IsFaulted.Should().BeTrue();
        await invoked.Invoking(t => t).Should().ThrowExactlyAsync<ObjectDisposedException>();
        priorityRan.Should().BeFalse();
    }

    [Fact]
    public void PostAfterRunReturned_AsyncExLosesItWithoutATrace_PriorityAsyncCountsAndReportsIt() => TestTimeout.OnOwnThread(() =>
    {
        SynchronizationContext asyncEx = AsyncContext.Run(() => SynchronizationContext.Current!);
        bool asyncExRan = false;
        Exception? asyncExThrew = Record.Exception(() => asyncEx.Post(_ => asyncExRan = true, null));
        asyncExRan.Should().BeFalse();
        asyncExThrew.Should().BeNull();

        PriorityContext priority = PriorityContext.Run(() => PriorityContext.Current!);
        var drops = new List<DropReason>();
        priority.WorkDropped += (_, e) => drops.Add(e.Reason);
        bool priorityRan = false;
        priority.GetSynchronizationContext(0).Post(_ => priorityRan = true, null);
        priorityRan.Should().BeFalse();
        drops.Should().Equal(DropReason.PostedAfterCompletion);
        priority.GetSnapshot().DroppedCount.Should().Be(1);
    }, nameof(PostAfterRunReturned_AsyncExLosesItWithoutATrace_PriorityAsyncCountsAndReportsIt));

    [Fact]
    public void AsyncWorkQueuedButNotAwaitedByTheEntry_AsyncExRunReturnsUnderIt_PriorityAsyncRunWaitsForIt() => TestTimeout.OnOwnThread(() =>
    {
        // AsyncEx: Factory.Run(async ...) counts only until the delegate returns its task, so Run returns while the work still awaits
        // (the gate is never opened here: its continuation would be posted to a context that is gone).
        var never = new TaskCompletionSource();
        Task? asyncExWork = null;
        AsyncContext.Run(() => { asyncExWork = AsyncContext.Current!.Factory.Run(async () => await never.Task); });
        asyncExWork!.IsCompleted.Should().BeFalse();

        // PriorityAsync: InvokeAsync holds the loop until the work's task completes.
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task? priorityWork = null;
        PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            priorityWork = context.InvokeAsync(async () => await gate.Task);
#pragma warning disable PA0003 // a helper thread the test joins through the gate
            _ = Task.Run(() =>
#pragma warning restore PA0003
            {
                context.WaitUntilParked(); // the entry is done and the work awaits the gate: only InvokeAsync's hold keeps the loop
                gate.SetResult();
            });
        });
        priorityWork!.IsCompletedSuccessfully.Should().BeTrue();
    }, nameof(AsyncWorkQueuedButNotAwaitedByTheEntry_AsyncExRunReturnsUnderIt_PriorityAsyncRunWaitsForIt));

    // ---- #181: an async void exception on a context thread ---------------------------------------------------------------

    [Fact]
    public async Task AsyncVoidThrowsOnAContextThread_AsyncExThreadDiesSilently_PriorityAsyncReportsItAndCanGoOn()
    {
        // AsyncEx: the loop thread ends; the exception surfaces only in JoinAsync, and work queued afterwards never runs. The async
        // void throws only once JoinAsync has been asked (a gate), and the later work is queued once the thread has ended: in any
        // other order the outcome depends on timing (a JoinAsync after the thread ended throws ObjectDisposedException; work queued
        // before the async void's exception was posted runs).
        var asyncEx = new AsyncContextThread();
        var go = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await asyncEx.Factory.Run(() => ThrowAsyncVoidAfter(go.Task)).WithTimeout("the AsyncEx task that starts the async void");
        Task joined = asyncEx.JoinAsync();
        go.SetResult();
        Func<Task> join = () => joined.WithTimeout("the AsyncEx join");
        await join.Should().ThrowExactlyAsync<NotImplementedException>();
        Task asyncExLater = asyncEx.Factory.Run(() => 1);
        asyncExLater.IsCompleted.Should().BeFalse("the AsyncEx loop thread has ended; nothing will ever run the task");

        // PriorityAsync, with a handler that marks it handled: reported once, and the loop goes on.
        var handled = new PriorityContextThread();
        await using (handled.BoundedDisposal())
        {
            var seen = new List<Exception>();
            var reported = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            handled.UnhandledException += (_, e) =>
            {
                seen.Add(e.Exception);
                e.Handled = true;
                reported.TrySetResult();
            };
            await handled.Context.GetTaskFactory(0).StartNew(() => ThrowAsyncVoid()).WithTimeout("the task that starts the async void");
            // Waited for, not assumed: the async void's exception is posted as an item of its own once its continuation has thrown,
            // which may be behind work queued meanwhile.
            await reported.Task.WithTimeout("the async void's exception to be reported");
            (await handled.Context.GetTaskFactory(0).StartNew(() => 1).WithTimeout("the work after the exception")).Should().Be(1);
            seen.Should().ContainSingle().Which.Should().BeOfType<NotImplementedException>();
        }

        // PriorityAsync, no handler: the loop stops, Completion faults with the exception, and later work fails loudly.
        var unhandled = new PriorityContextThread();
        await unhandled.Context.GetTaskFactory(0).StartNew(() => ThrowAsyncVoid()).WithTimeout("the task that starts the async void");
        Func<Task> completion = () => unhandled.Completion.WithTimeout("the faulted loop");
        await completion.Should().ThrowExactlyAsync<NotImplementedException>();
        Func<Task> later = () => unhandled.Context.InvokeAsync(() => Task.FromResult(1));
        await later.Should().ThrowExactlyAsync<ObjectDisposedException>();
    }

    // ---- #279: an entry exception waits for async void work ----------------------------------------------------------------

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public void EntryThrowsWhileAnAsyncVoidIsPending_RunRethrowsOnlyAfterTheAsyncVoidFinished(string name) => TestTimeout.OnOwnThread(() =>
    {
        // The same on both: Run waits for async void work even when the entry has already failed. A never-ending async void loop
        // therefore keeps Run from returning on both libraries; give such loops a CancellationToken and cancel it on failure.
        var order = new List<string>();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Action run = () => Library(name).Run(async () =>
        {
            WaitThenRecord(gate.Task, order);
            await Task.Yield();
            // Opens the gate from the loop's own queue, behind the failing entry: only a Run that goes on looping after the entry
            // failed gets there. One that returns early leaves the async void waiting, and the order below without it.
            SynchronizationContext.Current!.Post(_ => gate.SetResult(), null);
            throw new InvalidOperationException("entry failed");
        });
        run.Should().ThrowExactly<InvalidOperationException>().WithMessage("entry failed");
        lock (order)
        {
            order.Add("Run threw");
        }

        order.Should().Equal("async void finished", "Run threw");
    }, nameof(EntryThrowsWhileAnAsyncVoidIsPending_RunRethrowsOnlyAfterTheAsyncVoidFinished));

    // ---- #185: joining while async void work is pending ---------------------------------------------------------------------

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task JoinWhileAnAsyncVoidIsPending_CompletesOnlyAfterIt(string name)
    {
        // The same on both: joining waits for outstanding async void work. If that work waits for the joining thread (#185: a UI
        // thread blocked in Wait()), the join never completes. Await the join (or Completion) instead of blocking on it.
        ContextThread thread = Library(name).StartThread();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var order = new List<string>();
        await thread.Run(() => WaitThenRecord(gate.Task, order)).WithTimeout("the task that starts the async void");
        Task join = thread.JoinAsync();
        await thread.Run(() => { }).WithTimeout("a marker after the join: the loop is still alive");
        join.IsCompleted.Should().BeFalse();
        gate.SetResult();
        await join.WithTimeout("the join after the async void finished");
        order.Should().Equal("async void finished");
    }

    [Fact]
    public async Task JoinWhileAnAsyncVoidIsPending_PriorityAsyncShowsTheOutstandingOperation()
    {
        var priority = new PriorityContextThread();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await priority.Context.GetTaskFactory(0).StartNew(() => WaitThenRecord(gate.Task, new List<string>())).WithTimeout("the async void");
        priority.Complete(); // never blocks
        await priority.Context.GetTaskFactory(0).StartNew(() => { }).WithTimeout("a marker after Complete");
        priority.Context.GetSnapshot().OutstandingOperations.Should().Be(1, "the pending async void is what the loop waits for");
        gate.SetResult();
        await priority.Completion.WithTimeout("the loop to finish");
    }

    [Fact]
    public async Task DisposeOnTheLoopThread_NeitherLibraryWaitsForItself_TheLoopEndsAfterTheCallback()
    {
        // AsyncEx 5.1.2: Dispose only lets the loop end (Join is what blocks, and on the loop thread Join would wait for itself).
        var asyncEx = new AsyncContextThread();
        await asyncEx.Factory.StartNew(() => asyncEx.Dispose()).WithTimeout("AsyncEx's Dispose on its own loop thread");
        await asyncEx.JoinAsync().WithTimeout("the AsyncEx loop to end");

        var priority = new PriorityContextThread();
        await priority.Context.GetTaskFactory(0).StartNew(() => priority.Dispose()).WithTimeout("PriorityAsync's Dispose on its own loop thread");
        await priority.Completion.WithTimeout("the PriorityAsync loop to end");
    }

    [Fact]
    public async Task DisposeFromAnotherThread_AsyncExReturnsAtOnce_PriorityAsyncReturnsOnlyOnceTheLoopHasEnded()
    {
        // AsyncEx: Dispose returns while the loop is still busy with an item (the gate is closed: the loop cannot have ended).
        using var asyncExGate = new ManualResetEventSlim();
        var asyncEx = new AsyncContextThread();
        _ = asyncEx.Factory.StartNew(() => asyncExGate.Wait(TestTimeout.Unexpected));
        asyncEx.Dispose();
        Task asyncExJoin = asyncEx.JoinAsync();
        asyncExJoin.IsCompleted.Should().BeFalse("AsyncEx's Dispose returned while its loop still ran an item");
        asyncExGate.Set();
        await asyncExJoin.WithTimeout("the AsyncEx loop to end");

        // PriorityAsync: the item runs until Dispose has been called; when Dispose returns, the loop has ended. After migrating, a
        // `using var thread = new PriorityContextThread()` waits at the end of its block.
        var priority = new PriorityContextThread();
        int disposing = 0;
        using var running = new ManualResetEventSlim();
        _ = priority.Context.GetTaskFactory(0).StartNew(() =>
        {
            running.Set();
            SpinWait.SpinUntil(() => Volatile.Read(ref disposing) == 1, TestTimeout.Unexpected);
        });
        running.WaitOrFail("the item to start");
        bool endedWhenDisposeReturned = await Task.Run(() =>
        {
            Volatile.Write(ref disposing, 1);
            priority.Dispose();
            return priority.Completion.IsCompleted;
        }).WithTimeout("PriorityAsync's Dispose from another thread");
        endedWhenDisposeReturned.Should().BeTrue("PriorityContextThread.Dispose blocks until the loop has ended");
    }

    [Fact]
    public async Task DisposeOfAFaultedLoop_AsyncExSaysNothing_PriorityAsyncRethrowsTheFault()
    {
        var asyncEx = new AsyncContextThread();
        asyncEx.Context.SynchronizationContext.Post(_ => throw new InvalidOperationException("the AsyncEx loop's fault"), null);
        Func<Task> join = () => asyncEx.JoinAsync().WithTimeout("the AsyncEx loop to end");
        // AsyncEx 5.1.2 races its own clean-up here: JoinAsync has the fault, or now and then an ObjectDisposedException of its queue.
        await join.Should().ThrowAsync<Exception>();
        asyncEx.Invoking(thread => thread.Dispose()).Should().NotThrow("AsyncEx's Dispose only lets the loop end; JoinAsync has the fault");

        var priority = new PriorityContextThread();
        priority.Context.GetSynchronizationContext(0).Post(_ => throw new InvalidOperationException("the PriorityAsync loop's fault"), null);
        Func<Task> completion = () => priority.Completion.WithTimeout("the PriorityAsync loop to stop");
        await completion.Should().ThrowAsync<InvalidOperationException>();
        priority.Invoking(thread => thread.Dispose()).Should().Throw<InvalidOperationException>().WithMessage("the PriorityAsync loop's fault");
    }

    // ---- Nested Run, Task.Run and ConfigureAwait(false), Id -----------------------------------------------------------------

    [Fact]
    public void NestedRun_AsyncExRunsANestedLoop_PriorityAsyncThrows() => TestTimeout.OnOwnThread(() =>
    {
        AsyncContext.Run(() => AsyncContext.Run(() => 7)).Should().Be(7);

        Exception? nested = PriorityContext.Run(() => Record.Exception(() => PriorityContext.Run(() => 7)));
        nested.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("already running the loop");
    }, nameof(NestedRun_AsyncExRunsANestedLoop_PriorityAsyncThrows));

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public void TaskRunAndConfigureAwaitFalse_LeaveTheContext(string name) => TestTimeout.OnOwnThread(() =>
    {
        ContextLibrary library = Library(name);
        (bool inside, bool inTaskRun, bool afterConfigureAwaitFalse) = library.Run(async () =>
        {
            bool insideRun = library.Current is not null;
            bool inPool = await Task.Run(() => library.Current is not null);
            await Task.Delay(1).ConfigureAwait(false); // completes on the thread pool, so the rest runs there (not a wait for time)
            bool afterFalse = library.Current is not null;
            return (insideRun, inPool, afterFalse);
        });
        inside.Should().BeTrue();
        inTaskRun.Should().BeFalse();
        afterConfigureAwaitFalse.Should().BeFalse();
    }, nameof(TaskRunAndConfigureAwaitFalse_LeaveTheContext));

    [Fact]
    public void Id_AsyncContextHasItsSchedulersId_PriorityContextHasOneSchedulerPerLevel()
    {
        var asyncEx = new AsyncContext();
        asyncEx.Id.Should().Be(asyncEx.Scheduler.Id);

        var priority = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        using var disposePriority = priority.BoundedDisposal();
        Enumerable.Range(0, 3).Select(level => priority.Context.GetScheduler(level).Id).Should().OnlyHaveUniqueItems();
    }

    private static async void ThrowAsyncVoid()
    {
        await Task.Yield();
        throw new NotImplementedException();
    }

    private static async void ThrowAsyncVoidAfter(Task gate)
    {
        await gate;
        throw new NotImplementedException();
    }

    private static async void WaitThenRecord(Task gate, List<string> order)
    {
        await gate;
        lock (order)
        {
            order.Add("async void finished");
        }
    }
}
