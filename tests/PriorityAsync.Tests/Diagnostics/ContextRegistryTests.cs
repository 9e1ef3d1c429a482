using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

[Collection(DiagnosticsCollection.Name)]
public sealed class ContextRegistryTests
{
    [Fact]
    public async Task Live_ManyLoopsStartAndEndConcurrently_EachListedWhileRunningAndNoneAfter()
    {
        const int loops = 32;
        var contexts = new PriorityContextThread[loops];
        for (int i = 0; i < loops; i++)
        {
            contexts[i] = new PriorityContextThread(new PriorityContextOptions { Name = $"registry-{i}" });
        }

        // Each loop checks from inside itself that it is listed, then they all end at once.
        bool[] listed = new bool[loops];
        await Task.WhenAll(contexts.Select((thread, i) => thread.Context.RunOn(0, () => listed[i] = ContextRegistry.Live.Contains(thread.Context))))
            .WithTimeout("every loop ran its check");
        await Task.WhenAll(contexts.Select(thread => Task.Run(thread.Dispose))).WithTimeout("every loop ended");

        listed.Should().OnlyContain(x => x);
        ContextRegistry.Live.Should().NotIntersectWith(contexts.Select(thread => thread.Context));
    }

    [Fact]
    public void Register_IdleLoopAndPoolWithNothingListening_NoTimerArmed()
    {
        // [O-SLOW]: nothing periodic learns of listeners, so an idle process pays nothing. (Only blocking waits here: an await's
        // timeout would arm a timer of its own.)
        long before = Timer.ActiveCount;
        using var loop = new PriorityContextThread(new PriorityContextOptions { Name = "registry-idle-loop" });
        using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = "registry-idle-pool", ThreadCount = 2 });
        using var poolRan = new ManualResetEventSlim();
        pool.GetSynchronizationContext(0).Post(static ran => ((ManualResetEventSlim)ran!).Set(), poolRan);
        poolRan.WaitOrFail("an item on the pool");
        loop.Context.Drain();
        loop.Context.WaitUntilParked();

        ContextRegistry.Live.Should().Contain([loop.Context, pool]);
        Timer.ActiveCount.Should().BeLessThanOrEqualTo(before, "no timer runs for a loop or a pool (an earlier test's may have ended meanwhile)");
    }

    [Fact]
    public async Task RefreshIfListenersChanged_ListenerEnabledWhileTheLoopSleeps_TheNextItemIsTimed()
    {
        string name = "registry-wake-" + Guid.NewGuid().ToString("N");
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name });
        await using var disposeLoop = loop.BoundedDisposal();
        loop.Context.Drain();
        loop.Context.WaitUntilParked();
        Volatile.Read(ref loop.Context._slowPaths).Should().Be(SlowPaths.None);

        using var capture = new MetricsCapture(name, "priorityasync.work_item.run.duration");
        loop.Context.Drain(); // wakes the parked loop: it reads the flags as it wakes, before it runs this item
        loop.Context.WaitUntilParked(); // and has recorded the item's run time, after the item itself set the drain's signal

        capture.Of("priorityasync.work_item.run.duration").Should().ContainSingle("the item that woke the loop was timed");
    }

    [Fact]
    public async Task RefreshIfListenersChanged_ListenerEnabledWhileTheLoopNeverSleeps_SeenAtTheWatchdogsNextCheck()
    {
        // A loop busy in one long item: it does not park, so the stall watchdog's thread, which wakes every quarter of the timeout
        // anyway, is what tells it. The item waits for two checks after the listener started, then queues one more.
        string name = "registry-busy-" + Guid.NewGuid().ToString("N");
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name, StallTimeout = TimeSpan.FromMilliseconds(40) });
        await using var disposeLoop = loop.BoundedDisposal();
        using var started = new ManualResetEventSlim();
        using var listening = new ManualResetEventSlim();
        using var timedItemRan = new ManualResetEventSlim();
        int pathsBeforeTheListener = -1;
        loop.Context.GetSynchronizationContext(0).Post(
            _ =>
            {
                pathsBeforeTheListener = Volatile.Read(ref loop.Context._slowPaths);
                started.Set();
                listening.WaitOrFail("the listener");
                long checks = WatchdogThread.Shared.Checks + 2;
                SpinWait.SpinUntil(() => WatchdogThread.Shared.Checks >= checks, TestTimeout.Unexpected).Should().BeTrue("the watchdog checks every 10 ms");
                SynchronizationContext.Current!.Post(static done => ((ManualResetEventSlim)done!).Set(), timedItemRan); // runs next, no park between
            },
            null);

        started.WaitOrFail("the long item"); // running: the loop does not park again until it ends
        using var capture = new MetricsCapture(name, "priorityasync.work_item.run.duration");
        listening.Set();
        timedItemRan.WaitOrFail("the item queued after the watchdog's checks");
        loop.Context.Drain();

        pathsBeforeTheListener.Should().Be(SlowPaths.None);
        capture.Of("priorityasync.work_item.run.duration").Should().NotBeEmpty("the loop timed its items from the watchdog's check on, without parking");
    }

    [Fact]
    public async Task RefreshIfListenersChanged_ListenerCollectsTheObservableInstruments_SeenAtOnce()
    {
        // No watchdog, and a loop busy in one item: a collection (dotnet-counters every second, OpenTelemetry at each export) tells it.
        string name = "registry-collect-" + Guid.NewGuid().ToString("N");
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = name, StallTimeout = null });
        await using var disposeLoop = loop.BoundedDisposal();
        using var pause = loop.Context.PauseLoop();
        Volatile.Read(ref loop.Context._slowPaths).Should().Be(SlowPaths.None);

        using var capture = new MetricsCapture(name);
        capture.Collect();

        Volatile.Read(ref loop.Context._slowPaths).Should().Be(SlowPaths.WaitTime | SlowPaths.WaitHistogram | SlowPaths.RunTime);
    }
}
