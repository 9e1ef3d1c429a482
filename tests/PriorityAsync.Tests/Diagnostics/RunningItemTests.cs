using System.Runtime.CompilerServices;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>
/// [O-RUNNING]: each scheduler thread keeps a record of the item it runs, whoever listens, so that an item that started before any
/// session (or between two samples) can be named; the record goes when the thread goes idle, keeping nothing alive.
/// </summary>
public sealed class RunningItemTests
{
    [Fact]
    public async Task TryReadRunning_LoopBlockedInAnItem_NamesItsCallbackAndLevelUntilItParks()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "running-loop", Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        using var started = new ManualResetEventSlim();
        using var gate = new ManualResetEventSlim();
        loop.Context.GetSynchronizationContext(1).Post(Block, (started, gate));
        started.WaitOrFail("the item to start");

        loop.Context.TryReadRunning(0, out SendOrPostCallback callback, out object? state, out int level, out long dispatched).Should().BeTrue();
        CallbackNames.Describe(callback, state).Should().Be("RunningItemTests.Block");
        level.Should().Be(1);
        dispatched.Should().Be(loop.Context.ThreadDispatchCount(0));

        gate.Set();
        loop.Context.WaitUntilParked();
        loop.Context.TryReadRunning(0, out _, out _, out _, out _).Should().BeFalse("an idle loop runs nothing");
    }

    [Fact]
    public async Task TryReadRunning_AsyncMethodBlockedAfterAnAwait_NamesTheAsyncMethod()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "running-async", Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        using var started = new ManualResetEventSlim();
        using var gate = new ManualResetEventSlim();
        Task running = loop.Context.RunOn(0, () => BlockAfterYieldAsync(started, gate));
        started.WaitOrFail("the continuation to start");

        loop.Context.TryReadRunning(0, out SendOrPostCallback callback, out object? state, out int level, out _).Should().BeTrue();
        CallbackNames.Describe(callback, state).Should().Be("RunningItemTests.BlockAfterYieldAsync");
        level.Should().Be(2, "the continuation runs at the level the method moved to");
        gate.Set();
        await running.WithTimeout("the async method");
    }

    [Fact]
    public async Task TryReadRunning_PoolThreadBlocked_NamesItOnThatThreadOnly()
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = "running-pool", Levels = 2, ThreadCount = 2 });
        using var started = new ManualResetEventSlim();
        using var gate = new ManualResetEventSlim();
        pool.GetSynchronizationContext(1).Post(Block, (started, gate));
        started.WaitOrFail("the item to start");

        var named = Enumerable.Range(0, 2)
            .Where(thread => pool.TryReadRunning(thread, out SendOrPostCallback callback, out object? state, out _, out _) && CallbackNames.Describe(callback, state) == "RunningItemTests.Block")
            .ToList();
        named.Should().ContainSingle("one thread runs it");
        gate.Set();
    }

    [Fact]
    public async Task ClearRunning_LoopGoesIdle_TheLastItemsStateIsNotKeptAlive()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "running-release" });
        await using var disposeLoop = loop.BoundedDisposal();
        WeakReference state = PostWithState(loop.Context);
        loop.Context.Drain();
        loop.Context.WaitUntilParked();

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        state.IsAlive.Should().BeFalse("a parked loop's record holds no item");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference PostWithState(PriorityContext context)
    {
        var state = new object();
        context.GetSynchronizationContext(0).Post(static _ => { }, state);
        return new WeakReference(state);
    }

    private static void Block(object? state)
    {
        (ManualResetEventSlim started, ManualResetEventSlim gate) = ((ManualResetEventSlim, ManualResetEventSlim))state!;
        started.Set();
        gate.WaitOrFail("the test to release the item");
    }

    private static async Task BlockAfterYieldAsync(ManualResetEventSlim started, ManualResetEventSlim gate)
    {
        await Priority.Prioritize(2);
        await Priority.Yield();
        started.Set();
        gate.WaitOrFail("the test to release the continuation");
    }
}
