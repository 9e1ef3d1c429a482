// PA0001, PA0003: these tests await tasks that complete on the thread pool (Task.Delay), and leave a task unowned on purpose, to pin what Run does with them.
#pragma warning disable PA0001, PA0003
using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests;

/// <summary>Rule 8 and the entry points: <see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/>. Each test runs on its own thread.</summary>
public class PriorityContextRunTests
{
    [Fact]
    public void Run_AsyncEntry_ReturnsItsResult_AndRunsOnCallingThread() => TestTimeout.OnOwnThread(() =>
    {
        int caller = Environment.CurrentManagedThreadId;
        (int result, int thread) = PriorityContext.Run(async () =>
        {
            await Task.Delay(1);
            return (42, Environment.CurrentManagedThreadId);
        });
        result.Should().Be(42);
        thread.Should().Be(caller);
        SynchronizationContext.Current.Should().BeNull("Run restores the caller's context");
    }, nameof(Run_AsyncEntry_ReturnsItsResult_AndRunsOnCallingThread));

    [Fact]
    public void Run_EntryStartsAtDefaultLevel() => TestTimeout.OnOwnThread(() =>
    {
        PriorityContext.Run(() => Task.FromResult(PriorityContext.CurrentLevel)).Should().Be(0);
        PriorityContext.Run(() => Task.FromResult(PriorityContext.CurrentLevel), new PriorityContextOptions { Levels = 5, DefaultLevel = 3 }).Should().Be(3);
        int fromAction = -1;
        PriorityContext.Run(() => { fromAction = PriorityContext.CurrentLevel; }, new PriorityContextOptions { Levels = 2, DefaultLevel = 1 });
        fromAction.Should().Be(1);
    }, nameof(Run_EntryStartsAtDefaultLevel));

    [Fact]
    public void Run_WaitsForAsyncVoidWork() => TestTimeout.OnOwnThread(() =>
    {
        var finished = new List<int>();
        var clock = new FakeTimeProvider();
        using var armed = new CountdownEvent(3);
        // The async void work ends after the entry, completed off the loop: once all three wait, another thread moves the clock on,
        // and its Advance completes their delays there.
        Task advance = Task.Run(() =>
        {
            armed.WaitOrFail("the async void work to start its delays");
            clock.Advance(TimeSpan.FromMilliseconds(15));
        });
        PriorityContext.Run(() =>
        {
            for (int i = 0; i < 3; i++)
            {
                FireAndForget(i);
            }

            return Task.CompletedTask;
        });
        finished.Should().BeEquivalentTo([0, 1, 2], "Run returns only when every async void operation is done");
        // Not IsCompletedSuccessfully at once: Advance completes the last delay and may still be returning when the loop has run
        // the rest and Run has returned (seen on CI).
        advance.WaitOrFail("the thread that moved the clock to return");

        async void FireAndForget(int n)
        {
            Task delay = Task.Delay(TimeSpan.FromMilliseconds(5 * (n + 1)), clock);
            armed.Signal();
            await delay;
            await Prioritize(2);
            finished.Add(n);
        }
    }, nameof(Run_WaitsForAsyncVoidWork));

    [Fact]
    public void Run_EntryThrows_RethrowsUnwrapped() => TestTimeout.OnOwnThread(() =>
    {
        var boom = new InvalidOperationException("entry failed");
        Action run = () => PriorityContext.Run(async () =>
        {
            await Task.Yield();
            throw boom;
        });
        run.Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(boom);

        Action sync = () => PriorityContext.Run(() => throw new FormatException("sync"));
        sync.Should().Throw<FormatException>();

        Action syncFunc = () => PriorityContext.Run((Func<Task>)(() => throw new FormatException("sync func")));
        syncFunc.Should().Throw<FormatException>().WithMessage("sync func");
    }, nameof(Run_EntryThrows_RethrowsUnwrapped));

    [Fact]
    public void Run_EntryCancelled_RethrowsOperationCanceled() => TestTimeout.OnOwnThread(() =>
    {
        Action run = () => PriorityContext.Run(async () =>
        {
            await Task.Yield();
            throw new OperationCanceledException();
        });
        run.Should().Throw<OperationCanceledException>();
    }, nameof(Run_EntryCancelled_RethrowsOperationCanceled));

    [Fact]
    public void Run_AsyncVoidThrows_RunRethrowsIt() => TestTimeout.OnOwnThread(() =>
    {
        var boom = new ArithmeticException("from async void");
        Action run = () => PriorityContext.Run(async () =>
        {
            Explode();
            await Task.Delay(1);
        });
        run.Should().Throw<ArithmeticException>().Which.Should().BeSameAs(boom);

        async void Explode()
        {
            await Task.Yield();
            throw boom;
        }
    }, nameof(Run_AsyncVoidThrows_RunRethrowsIt));

    [Fact]
    public void Run_AsyncVoidThrows_HandledByEvent_LoopKeepsRunning() => TestTimeout.OnOwnThread(() =>
    {
        var seen = new List<(string Message, int Level)>();
        int result = PriorityContext.Run(async () =>
        {
            PriorityContext.Current!.UnhandledException += (_, e) =>
            {
                seen.Add((e.Exception.Message, e.Level));
                e.Handled = true;
            };
            await Prioritize(1);
            Explode("first");
            await Prioritize(2);
            Explode("second");
            await Prioritize(0); // behind both throws, queued at levels 1 and 2
            return 7;
        });
        result.Should().Be(7);
        // Both throws were queued before the entry moved to level 0; the level-2 one runs first.
        seen.Should().Equal(("second", 2), ("first", 1));

        static async void Explode(string message)
        {
            await Yield();
            throw new InvalidOperationException(message);
        }
    }, nameof(Run_AsyncVoidThrows_HandledByEvent_LoopKeepsRunning));

    [Fact]
    public void Run_PostedCallbackThrows_NotHandled_RunRethrowsAndDropsTheRestVisibly() => TestTimeout.OnOwnThread(() =>
    {
        var dropped = new List<WorkDroppedEventArgs>();
        PriorityContext? context = null;
        Action run = () => PriorityContext.Run(() =>
        {
            context = PriorityContext.Current!;
            context.WorkDropped += (_, e) => dropped.Add(e);
            var sc = context.GetSynchronizationContext(1);
            sc.Post(_ => throw new TimeoutException("posted"), null);
            sc.Post(_ => throw new InvalidOperationException("must not run: the loop stopped"), null);
            return Task.CompletedTask;
        }, new PriorityContextOptions { Levels = 2 });
        run.Should().Throw<TimeoutException>().WithMessage("posted");
        context!.State.Should().Be(PrioritySchedulerState.Faulted);
        dropped.Should().ContainSingle().Which.Reason.Should().Be(DropReason.AbandonedAfterFault);
    }, nameof(Run_PostedCallbackThrows_NotHandled_RunRethrowsAndDropsTheRestVisibly));

    [Fact]
    public void Run_Nested_ThrowsInvalidOperation() => TestTimeout.OnOwnThread(() =>
    {
        Action run = () => PriorityContext.Run(() => PriorityContext.Run(() => { }));
        run.Should().Throw<InvalidOperationException>().WithMessage("*already running*");
    }, nameof(Run_Nested_ThrowsInvalidOperation));

    [Fact]
    public void Run_NullEntry_ThrowsArgumentNull()
    {
        FluentActions.Invoking(() => PriorityContext.Run((Action)null!)).Should().Throw<ArgumentNullException>().WithParameterName("entry");
        FluentActions.Invoking(() => PriorityContext.Run((Func<Task>)null!)).Should().Throw<ArgumentNullException>().WithParameterName("entry");
        FluentActions.Invoking(() => PriorityContext.Run((Func<Task<int>>)null!)).Should().Throw<ArgumentNullException>().WithParameterName("entry");
    }

    [Fact]
    public void Run_EntryReturnsNullTask_ThrowsInvalidOperation() => TestTimeout.OnOwnThread(() =>
    {
        FluentActions.Invoking(() => PriorityContext.Run(() => (Task)null!)).Should().Throw<InvalidOperationException>().WithMessage("*returned null*");
    }, nameof(Run_EntryReturnsNullTask_ThrowsInvalidOperation));

    [Theory]
    [InlineData(0, 0, 20, "Levels")]
    [InlineData(65, 0, 20, "Levels")]
    [InlineData(-3, 0, 20, "Levels")]
    [InlineData(3, 3, 20, "DefaultLevel")]
    [InlineData(3, -1, 20, "DefaultLevel")]
    [InlineData(3, 0, -1, "IdleSpinCount")]
    [InlineData(3, 0, 10_001, "IdleSpinCount")]
    public void Options_OutOfRange_RejectedWhenTheContextIsCreated(int levels, int defaultLevel, int spin, string name)
    {
        var options = new PriorityContextOptions { Levels = levels, DefaultLevel = defaultLevel, IdleSpinCount = spin };
        FluentActions.Invoking(() => PriorityContext.Run(() => { }, options))
            .Should().Throw<ArgumentOutOfRangeException>().Where(e => e.ParamName == name).WithMessage("*must be between*");
        FluentActions.Invoking(() => new PriorityContextThread(options))
            .Should().Throw<ArgumentOutOfRangeException>().Where(e => e.ParamName == name);
    }

    [Fact]
    public void Options_Defaults_AreDocumentedValues()
    {
        var options = new PriorityContextOptions();
        options.Levels.Should().Be(3);
        options.DefaultLevel.Should().Be(0);
        options.IdleSpinCount.Should().Be(20);
        options.Name.Should().BeNull();
    }

    [Fact]
    public void Run_AfterReturn_LatePostIsCountedAndReported_LateSendThrows() => TestTimeout.OnOwnThread(() =>
    {
        SynchronizationContext captured = null!;
        PriorityContext context = null!;
        PriorityContext.Run(() =>
        {
            captured = SynchronizationContext.Current!;
            context = PriorityContext.Current!;
        });

        var dropped = new List<WorkDroppedEventArgs>();
        context.WorkDropped += (_, e) => dropped.Add(e);
        context.State.Should().Be(PrioritySchedulerState.Completed);
        FluentActions.Invoking(() => captured.Post(_ => { }, null)).Should().NotThrow();
        dropped.Should().ContainSingle().Which.Reason.Should().Be(DropReason.PostedAfterCompletion);
        context.GetSnapshot().DroppedCount.Should().Be(1);

        FluentActions.Invoking(() => captured.Send(_ => { }, null)).Should().Throw<ObjectDisposedException>();
    }, nameof(Run_AfterReturn_LatePostIsCountedAndReported_LateSendThrows));

    [Fact]
    public void Run_ForgottenTaskResumingAfterEnd_IsReportedNotLost() => TestTimeout.OnOwnThread(() =>
    {
        var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        PriorityContext context = null!;
        PriorityContext.Run(() =>
        {
            context = PriorityContext.Current!;
            _ = Forgotten(); // not awaited, not async void: Run does not wait for it
            return Task.CompletedTask;
        });

        using var reported = new ManualResetEventSlim();
        context.WorkDropped += (_, _) => reported.Set();
        io.SetResult(); // its continuation is posted to the finished context
        reported.WaitOrFail("the late continuation to be reported");
        context.GetSnapshot().DroppedCount.Should().Be(1);

        async Task Forgotten() => await io.Task;
    }, nameof(Run_ForgottenTaskResumingAfterEnd_IsReportedNotLost));
}
