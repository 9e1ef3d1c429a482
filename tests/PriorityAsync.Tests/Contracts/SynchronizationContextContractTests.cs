using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Contracts;

/// <summary>
/// The contract every level's <see cref="SynchronizationContext"/> keeps (rules 3 and 6), written once and run against every level of a
/// few shapes of each scheduler through <see cref="Threads"/> (0: a <see cref="PriorityContextThread"/>; N: a
/// <see cref="PriorityThreadPool"/> of N threads, in its lock-free mode or, with <see cref="Caps"/> or another <see cref="Policy"/>, its
/// locked mode), <see cref="Levels"/> and <see cref="Level"/> (as Channels' ChannelTestBase does). Where run order is asserted it is
/// asserted only with one thread and the strict policy; otherwise dequeue order is what holds (see the pool's ordering stress test and
/// policy tests), and these tests assert exactly once.
/// </summary>
public abstract class SynchronizationContextContractTests : IAsyncLifetime
{
    [ThreadStatic]
    private static bool t_inBody;

    private SchedulerHost _host = null!;

    protected virtual int Threads => 0;

    /// <summary>The pool's caps per level (<see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/>), or null.</summary>
    protected virtual IReadOnlyList<int>? Caps => null;

    /// <summary>The pool's policy, or null for strict: with caps, aging or weighted shares the pool dequeues under its lock.</summary>
    protected virtual PriorityPolicy? Policy => null;

    protected abstract int Levels { get; }

    protected abstract int Level { get; }

    protected PriorityScheduler Scheduler => _host.Scheduler;

    protected SynchronizationContext Sut => Scheduler.GetSynchronizationContext(Level);

    public Task InitializeAsync()
    {
        _host = SchedulerHost.Create(Threads, Levels, $"contract-{Threads}-{Levels}-{Level}", Caps, Policy);
        return Task.CompletedTask;
    }

    public Task DisposeAsync() => _host.DisposeOrFailAsync(); // bounded, naming what holds the scheduler open; rethrows a fault

    [Fact]
    public void Identity_IsCachedPerLevel_AndCopyKeepsLevel()
    {
        Sut.Should().BeSameAs(Scheduler.GetSynchronizationContext(Level));
        Sut.CreateCopy().Should().BeSameAs(Sut);
        var level = (PrioritySynchronizationContext)Sut;
        level.Level.Should().Be(Level);
        level.Scheduler.Should().BeSameAs(Scheduler);
    }

    [Fact]
    public async Task Post_FromOtherThread_RunsOnLoopThreadAtThisLevel()
    {
        var observed = new TaskCompletionSource<(bool Owned, int Level, SynchronizationContext? Sc)>(TaskCreationOptions.RunContinuationsAsynchronously);
        Sut.Post(_ => observed.SetResult((_host.OwnsCurrentThread(), Priority.CurrentLevel, SynchronizationContext.Current)), null);
        var (owned, level, sc) = await observed.Task.WithTimeout("the posted callback");
        owned.Should().BeTrue("the callback runs on one of the scheduler's threads");
        level.Should().Be(Level);
        sc.Should().BeSameAs(Sut);
    }

    [Fact]
    public async Task Post_PassesState()
    {
        var observed = new TaskCompletionSource<object?>(TaskCreationOptions.RunContinuationsAsynchronously);
        object state = new();
        Sut.Post(s => observed.SetResult(s), state);
        (await observed.Task.WithTimeout("the posted callback")).Should().BeSameAs(state);
    }

    [Fact]
    public async Task Post_FromLoopThread_RunsAfterTheCurrentItemInFifoOrder()
    {
        var ran = new ConcurrentQueue<int>();
        bool anyInline = false;
        await _host.RunOn(Level, () =>
        {
            t_inBody = true;
            for (int i = 0; i < 100; i++)
            {
                int n = i;
                Sut.Post(_ =>
                {
                    anyInline |= t_inBody;
                    ran.Enqueue(n);
                }, null);
            }

            t_inBody = false;
        }).WithTimeout("the body");
        _host.Drain();
        anyInline.Should().BeFalse("Post never runs inline");
        if (_host.RunOrderIsStrictOrder)
        {
            ran.Should().Equal(Enumerable.Range(0, 100));
        }
        else
        {
            ran.Should().BeEquivalentTo(Enumerable.Range(0, 100), "exactly once; on several threads, dequeue order is FIFO, run order need not be");
        }
    }

    [Fact]
    public void Post_NullCallback_ThrowsArgumentNull()
    {
        Action post = () => Sut.Post(null!, null);
        post.Should().Throw<ArgumentNullException>().WithParameterName("d");
    }

    [Fact]
    public void Send_NullCallback_ThrowsArgumentNull()
    {
        Action send = () => Sut.Send(null!, null);
        send.Should().Throw<ArgumentNullException>().WithParameterName("d");
    }

    [Fact]
    public async Task Send_OnLoopThread_RunsInlineAtThisLevel()
    {
        (bool ranInline, int level, int levelAfter) = await _host.RunOn(0, () =>
        {
            bool ran = false;
            int seen = -1;
            int thread = Environment.CurrentManagedThreadId;
            Sut.Send(_ =>
            {
                ran = Environment.CurrentManagedThreadId == thread;
                seen = Priority.CurrentLevel;
            }, null);
            return Task.FromResult((ran, seen, Priority.CurrentLevel));
        }).WithTimeout("the body");
        ranInline.Should().BeTrue();
        level.Should().Be(Level);
        levelAfter.Should().Be(0, "Send restores the caller's level");
    }

    // A cross-thread Send blocks its caller, without a timeout, until the callback ran: each one below runs on a thread of its own,
    // whose join is bounded, so that a lost item fails the test instead of blocking the test runner's thread for good.

    [Fact]
    public void Send_FromOtherThread_BlocksUntilRunOnLoopThread()
    {
        bool owned = false;
        TestTimeout.OnOwnThread(() => Sut.Send(_ => owned = _host.OwnsCurrentThread(), null), "the Send");
        owned.Should().BeTrue("Send returns only after the callback ran, on one of the scheduler's threads");
    }

    [Fact]
    public void Send_FromOtherThread_RethrowsTheCallbacksExceptionUnwrapped()
    {
        var boom = new InvalidOperationException("boom");
        Action send = () => TestTimeout.OnOwnThread(() => Sut.Send(_ => throw boom, null), "the throwing Send");
        send.Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(boom);

        // The loop is still alive and the exception did not count as unhandled.
        int after = 0;
        TestTimeout.OnOwnThread(() => Sut.Send(_ => after = 1, null), "the Send after it");
        after.Should().Be(1);
    }

    [Fact]
    public async Task Send_AfterContextFinished_ThrowsObjectDisposed()
    {
        await _host.DisposeOrFailAsync();
        Action send = () => Sut.Send(_ => { }, null);
        send.Should().Throw<ObjectDisposedException>();
    }

    [Fact]
    public async Task Post_AfterContextFinished_DoesNotThrowAndIsCountedAndReported()
    {
        var dropped = new List<WorkDroppedEventArgs>();
        Scheduler.WorkDropped += (_, e) => dropped.Add(e);
        await _host.DisposeOrFailAsync();

        SendOrPostCallback callback = _ => throw new InvalidOperationException("must not run");
        object state = new();
        Action post = () => Sut.Post(callback, state);
        post.Should().NotThrow();

        dropped.Should().ContainSingle();
        dropped[0].Level.Should().Be(Level);
        dropped[0].Callback.Should().BeSameAs(callback);
        dropped[0].State.Should().BeSameAs(state);
        dropped[0].Reason.Should().Be(DropReason.PostedAfterCompletion);
        Scheduler.GetSnapshot().DroppedCount.Should().Be(1);
    }

    [Fact]
    public async Task OperationStarted_KeepsTheLoopAliveUntilCompleted()
    {
        Sut.OperationStarted();
        _host.Complete();
        _host.Drain();
        Scheduler.State.Should().Be(PrioritySchedulerState.Running, "an operation is outstanding");
        Scheduler.GetSnapshot().OutstandingOperations.Should().Be(1);

        Sut.OperationCompleted();
        await _host.Completion.WithTimeout("the scheduler to finish once the operation completed");
        Scheduler.State.Should().Be(PrioritySchedulerState.Completed);
    }

    [Fact]
    public async Task AsyncVoid_IsTrackedAsAnOperation()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool finished = false;
        await _host.RunOn(Level, () => AsyncVoid()).WithTimeout("starting the async void method");
        _host.Complete();
        _host.Drain();
        Scheduler.State.Should().Be(PrioritySchedulerState.Running, "the async void method has not finished");

        release.SetResult();
        await _host.Completion.WithTimeout("the scheduler to finish after the async void method");
        finished.Should().BeTrue();

        async void AsyncVoid()
        {
            await release.Task;
            finished = true;
        }
    }
}

public sealed class SynchronizationContextContract_Levels1_Level0 : SynchronizationContextContractTests
{
    protected override int Levels => 1;

    protected override int Level => 0;
}

public sealed class SynchronizationContextContract_Levels3_Level0 : SynchronizationContextContractTests
{
    protected override int Levels => 3;

    protected override int Level => 0;
}

public sealed class SynchronizationContextContract_Levels3_Level1 : SynchronizationContextContractTests
{
    protected override int Levels => 3;

    protected override int Level => 1;
}

public sealed class SynchronizationContextContract_Levels3_Level2 : SynchronizationContextContractTests
{
    protected override int Levels => 3;

    protected override int Level => 2;
}

public sealed class SynchronizationContextContract_Levels64_Level63 : SynchronizationContextContractTests
{
    protected override int Levels => 64;

    protected override int Level => 63;
}

public sealed class SynchronizationContextContract_Pool1_Levels3_Level1 : SynchronizationContextContractTests
{
    protected override int Threads => 1;

    protected override int Levels => 3;

    protected override int Level => 1;
}

public sealed class SynchronizationContextContract_Pool3_Levels1_Level0 : SynchronizationContextContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 1;

    protected override int Level => 0;
}

public sealed class SynchronizationContextContract_Pool3_Levels3_Level0 : SynchronizationContextContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 0;
}

public sealed class SynchronizationContextContract_Pool2_Levels3_Level2 : SynchronizationContextContractTests
{
    protected override int Threads => 2;

    protected override int Levels => 3;

    protected override int Level => 2;
}

public sealed class SynchronizationContextContract_Pool4_Levels64_Level63 : SynchronizationContextContractTests
{
    protected override int Threads => 4;

    protected override int Levels => 64;

    protected override int Level => 63;
}

public sealed class SynchronizationContextContract_Pool3_Levels3_Capped313_Level1 : SynchronizationContextContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 1;

    protected override IReadOnlyList<int>? Caps => [3, 1, 3];
}

public sealed class SynchronizationContextContract_Pool2_Levels3_Capped122_Level0 : SynchronizationContextContractTests
{
    protected override int Threads => 2;

    protected override int Levels => 3;

    protected override int Level => 0;

    protected override IReadOnlyList<int>? Caps => [1, 2, 2];
}

public sealed class SynchronizationContextContract_Pool2_Levels3_Aging_Level1 : SynchronizationContextContractTests
{
    protected override int Threads => 2;

    protected override int Levels => 3;

    protected override int Level => 1;

    protected override PriorityPolicy? Policy => PriorityPolicy.Aging(TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(5));
}

public sealed class SynchronizationContextContract_Pool1_Levels3_Shares_Level0 : SynchronizationContextContractTests
{
    protected override int Threads => 1;

    protected override int Levels => 3;

    protected override int Level => 0;

    protected override PriorityPolicy? Policy => PriorityPolicy.WeightedShares(1, 2, 4);
}

public sealed class SynchronizationContextContract_Pool3_Levels3_Shares_Level2 : SynchronizationContextContractTests
{
    protected override int Threads => 3;

    protected override int Levels => 3;

    protected override int Level => 2;

    protected override PriorityPolicy? Policy => PriorityPolicy.WeightedShares(1, 2, 4);
}
