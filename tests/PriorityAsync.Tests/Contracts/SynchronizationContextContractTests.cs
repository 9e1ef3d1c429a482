using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Contracts;

/// <summary>
/// The contract every level's <see cref="PrioritySynchronizationContext"/> keeps (rules 3 and 6), written once and run against every
/// level of a few context shapes through <see cref="Levels"/> and <see cref="Level"/> (as Channels' ChannelTestBase does).
/// </summary>
public abstract class SynchronizationContextContractTests : IAsyncLifetime
{
    private PriorityContextThread _loop = null!;

    protected abstract int Levels { get; }

    protected abstract int Level { get; }

    protected PriorityContext Context => _loop.Context;

    protected PrioritySynchronizationContext Sut => Context.GetSynchronizationContext(Level);

    public Task InitializeAsync()
    {
        _loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels, Name = $"contract-{Levels}-{Level}" });
        return Task.CompletedTask;
    }

    public async Task DisposeAsync() => await _loop.DisposeAsync().AsTask().WithTimeout("the loop to finish"); // rethrows a fault

    [Fact]
    public void Identity_IsCachedPerLevel_AndCopyKeepsLevel()
    {
        Sut.Should().BeSameAs(Context.GetSynchronizationContext(Level));
        Sut.Level.Should().Be(Level);
        Sut.Context.Should().BeSameAs(Context);
        Sut.CreateCopy().Should().BeSameAs(Sut);
        ((PrioritySynchronizationContext)Sut.CreateCopy()).Level.Should().Be(Level);
    }

    [Fact]
    public async Task Post_FromOtherThread_RunsOnLoopThreadAtThisLevel()
    {
        var observed = new TaskCompletionSource<(int Thread, int Level, SynchronizationContext? Sc)>(TaskCreationOptions.RunContinuationsAsynchronously);
        Sut.Post(_ => observed.SetResult((Environment.CurrentManagedThreadId, PriorityContext.CurrentLevel, SynchronizationContext.Current)), null);
        var (thread, level, sc) = await observed.Task.WithTimeout("the posted callback");
        thread.Should().Be(_loop.ManagedThreadId);
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
        var ran = new List<int>();
        await Context.RunOn(Level, () =>
        {
            for (int i = 0; i < 100; i++)
            {
                int n = i;
                Sut.Post(_ => ran.Add(n), null);
            }

            ran.Should().BeEmpty("Post never runs inline");
        }).WithTimeout("the body");
        Context.Drain();
        ran.Should().Equal(Enumerable.Range(0, 100));
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
        (bool ranInline, int level, int levelAfter) = await Context.RunOn(0, () =>
        {
            bool ran = false;
            int seen = -1;
            Sut.Send(_ =>
            {
                ran = true;
                seen = PriorityContext.CurrentLevel;
            }, null);
            return Task.FromResult((ran, seen, PriorityContext.CurrentLevel));
        }).WithTimeout("the body");
        ranInline.Should().BeTrue();
        level.Should().Be(Level);
        levelAfter.Should().Be(0, "Send restores the caller's level");
    }

    [Fact]
    public void Send_FromOtherThread_BlocksUntilRunOnLoopThread()
    {
        int ranOn = 0;
        Sut.Send(_ => ranOn = Environment.CurrentManagedThreadId, null);
        ranOn.Should().Be(_loop.ManagedThreadId, "Send returns only after the callback ran");
    }

    [Fact]
    public void Send_FromOtherThread_RethrowsTheCallbacksExceptionUnwrapped()
    {
        var boom = new InvalidOperationException("boom");
        Action send = () => Sut.Send(_ => throw boom, null);
        send.Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(boom);

        // The loop is still alive and the exception did not count as unhandled.
        int after = 0;
        Sut.Send(_ => after = 1, null);
        after.Should().Be(1);
    }

    [Fact]
    public async Task Send_AfterContextFinished_ThrowsObjectDisposed()
    {
        await _loop.DisposeAsync();
        Action send = () => Sut.Send(_ => { }, null);
        send.Should().Throw<ObjectDisposedException>();
    }

    [Fact]
    public async Task Post_AfterContextFinished_DoesNotThrowAndIsCountedAndReported()
    {
        var dropped = new List<WorkDroppedEventArgs>();
        Context.WorkDropped += (_, e) => dropped.Add(e);
        await _loop.DisposeAsync();

        SendOrPostCallback callback = _ => throw new InvalidOperationException("must not run");
        object state = new();
        Action post = () => Sut.Post(callback, state);
        post.Should().NotThrow();

        dropped.Should().ContainSingle();
        dropped[0].Level.Should().Be(Level);
        dropped[0].Callback.Should().BeSameAs(callback);
        dropped[0].State.Should().BeSameAs(state);
        dropped[0].Reason.Should().Be(DropReason.PostedAfterCompletion);
        Context.GetSnapshot().DroppedCount.Should().Be(1);
    }

    [Fact]
    public async Task OperationStarted_KeepsTheLoopAliveUntilCompleted()
    {
        Sut.OperationStarted();
        _loop.Complete();
        Context.Drain();
        Context.State.Should().Be(PriorityContextState.Running, "an operation is outstanding");
        Context.GetSnapshot().OutstandingOperations.Should().Be(1);

        Sut.OperationCompleted();
        await _loop.Completion.WithTimeout("the loop to finish once the operation completed");
        Context.State.Should().Be(PriorityContextState.Completed);
    }

    [Fact]
    public async Task AsyncVoid_IsTrackedAsAnOperation()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool finished = false;
        await Context.RunOn(Level, () => AsyncVoid()).WithTimeout("starting the async void method");
        _loop.Complete();
        Context.Drain();
        Context.State.Should().Be(PriorityContextState.Running, "the async void method has not finished");

        release.SetResult();
        await _loop.Completion.WithTimeout("the loop to finish after the async void method");
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
