using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests;

/// <summary>
/// <see cref="PriorityContext.InvokeAsync(Func{Task}, int)"/> and <see cref="PriorityContext.Run{TResult}(Func{TResult}, PriorityContextOptions?)"/>:
/// the entry points for code coming from AsyncEx's <c>Factory.Run</c> and <c>AsyncContext.Run(Func&lt;T&gt;)</c>.
/// </summary>
public class PriorityContextInvokeTests
{
    // ---- InvokeAsync: results, levels, threads ----------------------------------------------------------------------------

    [Fact]
    public async Task InvokeAsync_FromAnotherThread_RunsOnTheLoopAtTheLevel_AndReturnsTheWorksResult()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        (int startThread, int startLevel, int endThread, int endLevel) = await loop.Context.InvokeAsync(
            async () =>
            {
                int thread = Environment.CurrentManagedThreadId;
                int level = PriorityContext.CurrentLevel;
#pragma warning disable PA0001 // a pool-completed await on purpose: the work must resume on the loop thread at its level
                await Task.Delay(1);
#pragma warning restore PA0001
                return (thread, level, Environment.CurrentManagedThreadId, PriorityContext.CurrentLevel);
            },
            2).WithTimeout("the invoked work");
        startThread.Should().Be(loop.ManagedThreadId);
        endThread.Should().Be(loop.ManagedThreadId);
        startLevel.Should().Be(2);
        endLevel.Should().Be(2);
    }

    [Fact]
    public async Task InvokeAsync_WithoutALevel_RunsAtTheDefaultLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, DefaultLevel = 1 });
        await using var disposeLoop = loop.BoundedDisposal();
        (await loop.Context.InvokeAsync(() => Task.FromResult(PriorityContext.CurrentLevel)).WithTimeout("the typed work")).Should().Be(1);
        int untyped = -1;
        await loop.Context.InvokeAsync(() =>
        {
            untyped = PriorityContext.CurrentLevel;
            return Task.CompletedTask;
        }).WithTimeout("the untyped work");
        untyped.Should().Be(1);
    }

    [Fact]
    public async Task InvokeAsync_FromTheLoopThread_QueuesBehindWorkAlreadyQueuedAtTheLevel()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeLoop = loop.BoundedDisposal();
        var order = new List<string>();
        Task invoked = await loop.Context.GetTaskFactory(0).StartNew(() =>
        {
            SynchronizationContext.Current!.Post(_ => order.Add("posted before"), null);
            Task task = PriorityContext.Current!.InvokeAsync(() =>
            {
                order.Add("invoked");
                return Task.CompletedTask;
            }, 0);
            order.Add("caller goes on");
            return task;
        }).WithTimeout("the caller");
        await invoked.WithTimeout("the invoked work");
        order.Should().Equal("caller goes on", "posted before", "invoked");
    }

    [Fact]
    public async Task InvokeAsync_AwaitedOffTheLoop_ContinuationDoesNotRunOnTheLoopThread()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        int continuedOn = await Task.Run(async () =>
        {
            await loop.Context.InvokeAsync(() => Task.CompletedTask);
            return Environment.CurrentManagedThreadId;
        }).WithTimeout("the awaiting pool task");
        continuedOn.Should().NotBe(loop.ManagedThreadId);
    }

    // ---- InvokeAsync: failures go into the task ----------------------------------------------------------------------------

    [Fact]
    public async Task InvokeAsync_WorkThrows_TaskFaultsWithThatException_AndTheLoopGoesOn()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        int unhandled = 0;
        loop.UnhandledException += (_, _) => Interlocked.Increment(ref unhandled);

        Func<Task> synchronous = () => loop.Context.InvokeAsync(() => throw new InvalidOperationException("sync")).WithTimeout("the sync throw");
        await synchronous.Should().ThrowExactlyAsync<InvalidOperationException>().WithMessage("sync");
        Func<Task> asynchronous = () => loop.Context.InvokeAsync<int>(async () =>
        {
            await Task.Yield();
            throw new InvalidOperationException("async");
        }).WithTimeout("the async throw");
        await asynchronous.Should().ThrowExactlyAsync<InvalidOperationException>().WithMessage("async");

        (await loop.Context.InvokeAsync(() => Task.FromResult(3)).WithTimeout("the work afterwards")).Should().Be(3);
        unhandled.Should().Be(0, "the exception belongs to the returned task, not to the loop");
    }

    [Fact]
    public async Task InvokeAsync_WorkIsCanceled_TaskIsCanceledWithTheSameToken()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Task task = loop.Context.InvokeAsync(async () =>
        {
            await Task.Yield();
            cts.Token.ThrowIfCancellationRequested();
        });
        Func<Task> wait = () => task.WithTimeout("the canceled work");
        (await wait.Should().ThrowAsync<OperationCanceledException>()).Which.CancellationToken.Should().Be(cts.Token);
        task.IsCanceled.Should().BeTrue();
    }

    [Fact]
    public async Task InvokeAsync_WorkReturnsNull_TaskFaultsWithInvalidOperationException()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        Func<Task> wait = () => loop.Context.InvokeAsync(() => null!).WithTimeout("the work");
        (await wait.Should().ThrowExactlyAsync<InvalidOperationException>()).Which.Message.Should().Contain("returned null");
    }

    // ---- InvokeAsync: bad input and a finished context ------------------------------------------------------------------

    [Fact]
    public async Task InvokeAsync_NullWork_ThrowsArgumentNullException()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityContext context = loop.Context;
        foreach (Action call in new Action[]
        {
            () => context.InvokeAsync(null!),
            () => context.InvokeAsync(null!, 0),
            () => context.InvokeAsync<int>(null!),
            () => context.InvokeAsync<int>(null!, 0),
        })
        {
            call.Should().Throw<ArgumentNullException>().WithParameterName("work");
        }
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    public async Task InvokeAsync_LevelOutOfRange_ThrowsNamingTheValueAndTheRange(int level)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        bool ran = false;
        Func<Task> work = () =>
        {
            ran = true;
            return Task.CompletedTask;
        };
        PriorityContext context = loop.Context;
        Action untyped = () => context.InvokeAsync(work, level);
        untyped.Should().Throw<ArgumentOutOfRangeException>()
            .WithParameterName(nameof(level)).Where(e => Equals(e.ActualValue, level) && e.Message.Contains("between 0 and 2"));
        Action typed = () => context.InvokeAsync(() => Task.FromResult(1), level);
        typed.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(level));
        await loop.Context.InvokeAsync(() => Task.CompletedTask).WithTimeout("a marker");
        ran.Should().BeFalse();
    }

    [Fact]
    public async Task InvokeAsync_AfterTheContextFinished_FaultsWithObjectDisposedException_AndReportsTheDrop()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "finished" });
        await loop.DisposeAsync().AsTask().WithTimeout("the loop to finish");
        var drops = new List<DropReason>();
        loop.Context.WorkDropped += (_, e) => drops.Add(e.Reason);
        bool ran = false;

        Task<int> task = loop.Context.InvokeAsync(() =>
        {
            ran = true;
            return Task.FromResult(1);
        });

        task.IsFaulted.Should().BeTrue("it must fail at once, never hang");
        Func<Task> wait = () => task;
        (await wait.Should().ThrowExactlyAsync<ObjectDisposedException>()).Which.Message.Should().Contain("'finished'").And.Contain("did not run");
        ran.Should().BeFalse();
        drops.Should().Equal(DropReason.PostedAfterCompletion);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(1);
    }

    // ---- InvokeAsync keeps the loop alive until the work is done ---------------------------------------------------------

    [Fact]
    public async Task InvokeAsync_ThreadCompletedWhileTheWorkIsPending_LoopWaitsForTheWork()
    {
        var loop = new PriorityContextThread();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task<int> task = loop.Context.InvokeAsync(async () =>
        {
            await gate.Task;
            return PriorityContext.CurrentLevel + 5;
        });
        await loop.Context.InvokeAsync(() => Task.CompletedTask).WithTimeout("a marker: the work is now awaiting the gate");
        loop.Complete();
        loop.Context.WaitUntilParked(); // without the hold, the loop would have finished instead of parking (and the next line drop the continuation)
        loop.Completion.IsCompleted.Should().BeFalse();
        gate.SetResult();
        (await task.WithTimeout("the work")).Should().Be(5);
        await loop.Completion.WithTimeout("the loop to finish after the work");
        loop.Context.GetSnapshot().DroppedCount.Should().Be(0);
    }

    [Fact]
    public void InvokeAsync_NotAwaitedByTheEntryOfRun_RunReturnsOnlyAfterTheWorkCompleted() => TestTimeout.OnOwnThread(() =>
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool finished = false;
        Task? invoked = null;
        PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            invoked = context.InvokeAsync(async () =>
            {
                await gate.Task;
                finished = true;
            });
#pragma warning disable PA0003 // a helper thread the test joins through the gate
            _ = Task.Run(() =>
#pragma warning restore PA0003
            {
                context.WaitUntilParked(); // the entry has returned and the work waits on the gate: only the hold keeps the loop
                gate.SetResult();
            });
        });
        finished.Should().BeTrue();
        invoked!.IsCompletedSuccessfully.Should().BeTrue();
    }, nameof(InvokeAsync_NotAwaitedByTheEntryOfRun_RunReturnsOnlyAfterTheWorkCompleted));

    [Fact]
    public async Task InvokeAsync_CompletedWork_AllocatesOnlyTheOperationAndItsTask()
    {
        const int Count = 1_000;
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerCall = await loop.Context.InvokeAsync(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            Func<Task> work = static () => Task.CompletedTask;
            for (int warm = 0; warm < 2; warm++)
            {
                for (int i = 0; i < Count; i++)
                {
                    _ = context.InvokeAsync(work, 0);
                }

                await context.Yield(0); // behind all of them: they have run when this returns
            }

            // The lowest of five windows: what every call allocates shows in each; a one-time allocation of the runtime (a queue
            // segment, tiered code) that lands in one window once in a full parallel run does not fail the test (once: 356 B/call).
            double lowest = double.MaxValue;
            for (int window = 0; window < 5; window++)
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < Count; i++)
                {
                    _ = context.InvokeAsync(work, 0);
                }

                await context.Yield(0);
                lowest = Math.Min(lowest, (GC.GetAllocatedBytesForCurrentThread() - before) / (double)Count);
            }

            return lowest;
        }).WithTimeout("the measurement");

        // The operation (a TaskCompletionSource<object?> with 6 fields) and its Task<object?>: 136 B on x64 (measured), and the work's
        // flow, whose exact size the bound adds ([X-FLOW]); a bound of 200 plus the flow leaves room for a runtime change but catches
        // one more object per call (a closure, a continuation task).
        bytesPerCall.Should().BeLessThanOrEqualTo(200 + AllocationTests.FlowBytes(loop.Context));
    }

    [Theory]
    [InlineData("level code")]
    [InlineData("a flow")]
    public async Task InvokeAsync_AwaitedOneByOne_AddsOnlyTheAwaitsContinuation(string from)
    {
        // The usual use: code awaits each call. Its join is a number and a field on the work's flow ([X-JOIN]): no edge, no lists, no lock;
        // the await adds only what awaiting any task from a SynchronizationContext does. From level code (a factory task) and from a flow
        // (InvokeAsync work, whose links are made once).
        const int Count = 1_000;
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        Func<Task<(double, double)>> measure = async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            Func<Task> work = static () => Task.CompletedTask;
            double lowestAwaited = double.MaxValue, lowestNotAwaited = double.MaxValue;
            for (int window = 0; window < 7; window++) // the first two warm up
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < Count; i++)
                {
                    await context.InvokeAsync(work, 0);
                }

                long middle = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < Count; i++)
                {
                    _ = context.InvokeAsync(work, 0);
                }

                await context.Yield(0);
                if (window >= 2)
                {
                    lowestAwaited = Math.Min(lowestAwaited, (middle - before) / (double)Count);
                    lowestNotAwaited = Math.Min(lowestNotAwaited, (GC.GetAllocatedBytesForCurrentThread() - middle) / (double)Count);
                }
            }

            return (lowestAwaited, lowestNotAwaited);
        };
        (double awaited, double notAwaited) = await (from == "a flow" ? loop.Context.InvokeAsync(measure, 0).Task : loop.Context.RunOn(0, measure))
            .WithTimeout("the measurement");

        // One continuation object (SynchronizationContextAwaitTaskContinuation, 48 B on x64) and room for rounding; an edge with its
        // lists (about 200 B) would fail it.
        awaited.Should().BeLessThanOrEqualTo(notAwaited + 64, $"awaiting ({awaited:F1} B) adds only the await's continuation to a call ({notAwaited:F1} B)");
    }

    // ---- Run<TResult>(Func<TResult>) ---------------------------------------------------------------------------------------

    [Fact]
    public void RunSyncFunc_ReturnsTheValue_OnTheCallingThread_AtTheDefaultLevel() => TestTimeout.OnOwnThread(() =>
    {
        int caller = Environment.CurrentManagedThreadId;
        (int thread, int level) = PriorityContext.Run(() => (Environment.CurrentManagedThreadId, PriorityContext.CurrentLevel), new PriorityContextOptions { Levels = 3, DefaultLevel = 2 });
        thread.Should().Be(caller);
        level.Should().Be(2);
        SynchronizationContext.Current.Should().BeNull("Run restores the caller's context");
    }, nameof(RunSyncFunc_ReturnsTheValue_OnTheCallingThread_AtTheDefaultLevel));

    [Fact]
    public void RunSyncFunc_WaitsForAsyncVoidWorkItStarted() => TestTimeout.OnOwnThread(() =>
    {
        var order = new List<string>();
        string result = PriorityContext.Run(() =>
        {
            StartAsyncVoid(order);
            order.Add("entry returned");
            return "value";
        });
        order.Add("Run returned " + result);
        order.Should().Equal("entry returned", "async void finished", "Run returned value");
    }, nameof(RunSyncFunc_WaitsForAsyncVoidWorkItStarted));

    [Fact]
    public void RunSyncFunc_EntryThrows_RethrowsTheExceptionUnwrapped() => TestTimeout.OnOwnThread(() =>
    {
        Action run = () => PriorityContext.Run((Func<int>)(() => throw new FormatException("bad")));
        run.Should().ThrowExactly<FormatException>().WithMessage("bad");
    }, nameof(RunSyncFunc_EntryThrows_RethrowsTheExceptionUnwrapped));

    [Fact]
    public void RunSyncFunc_NullEntry_ThrowsArgumentNullException()
    {
        Action run = () => PriorityContext.Run((Func<int>)null!);
        run.Should().Throw<ArgumentNullException>().WithParameterName("entry");
    }

    [Fact]
    public void RunSyncFunc_NestedOnALoopThread_Throws() => TestTimeout.OnOwnThread(() =>
    {
        Exception? nested = PriorityContext.Run(() => Record.Exception(() => PriorityContext.Run(() => 1)));
        nested.Should().BeOfType<InvalidOperationException>();
    }, nameof(RunSyncFunc_NestedOnALoopThread_Throws));

    private static async void StartAsyncVoid(List<string> order)
    {
        await Task.Yield();
        await Task.Delay(1); // still pending after the entry's end, and completed on the thread pool: Run must wait for it
        order.Add("async void finished");
    }
}
