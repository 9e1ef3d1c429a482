using System.Collections.Concurrent;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;
using static PriorityAsync.Tests.Timers.TimerTestHelpers;

namespace PriorityAsync.Tests.Escalation;

/// <summary>
/// The region of a lock held in a flow becomes its holder's child only when a raise has something of it to reach ([X-LOCK-FAST] in
/// docs/design.md, "The region's link"): a synchronous critical section never links it, and still no raise is lost: a raise before the
/// region's first queued item puts that item at the raised level, a raise after it moves it, and so with a flow the region joined or a
/// lock it took inside. On a loop and on a pool of one thread, where the order of the log is the order of the levels.
/// </summary>
public abstract class LockRegionLinkTests : IAsyncLifetime
{
    private const int Levels = 4;

    private SchedulerHost _host = null!;

    protected abstract int Threads { get; }

    private PriorityScheduler Scheduler => _host.Scheduler;

    public Task InitializeAsync()
    {
        _host = SchedulerHost.Create(Threads, Levels, $"lock-region-link-{Threads}");
        return Task.CompletedTask;
    }

    public async Task DisposeAsync() => await _host.DisposeOrFailAsync();

    [Theory]
    [InlineData(1, false)]
    [InlineData(1, true)]
    [InlineData(2, true)] // a semaphore of two permits: its claimed holding ends under the lock, a lock's lock-free
    public async Task SynchronousSectionInAFlow_NeverClaimsOrLinksTheRegion_AnAwaitInsideDoesUntilTheRelease(int maxCount, bool semaphore)
    {
        var lk = new PriorityLock();
        var sem = new PrioritySemaphore(1, maxCount);
        await WarmAsync(Scheduler, lk, sem);
        PrioritySemaphore taken = semaphore ? sem : lk.Semaphore;
        WorkFlow? flow = null, region = null;
        IEscalationNode? claimedSync = null, linkedSync = null, claimedAfterAwait = null, linkedAfterAwait = null;
        bool claimFlagSync = true, claimFlagAfterAwait = false;
        await Scheduler.InvokeAsync(
            async () =>
            {
                flow = CurrentFlow();
                PriorityLock.Releaser releaser = default;
                if (semaphore)
                {
                    await sem.WaitAsync(); // inline, not in a helper: an async method's return gives its caller's context back
                }
                else
                {
                    releaser = await lk.LockAsync();
                }

                region = CurrentFlow();
                (claimedSync, linkedSync, claimFlagSync) = (region.Claimant, region.LinkedHolder, taken.LockFreeHoldingClaimed);
                await Yield(); // the region's first queued item
                (claimedAfterAwait, linkedAfterAwait, claimFlagAfterAwait) = (region.Claimant, region.LinkedHolder, taken.LockFreeHoldingClaimed);
                if (semaphore)
                {
                    sem.Release();
                }
                else
                {
                    releaser.Dispose();
                }
            },
            level: 0).WithTimeout("the flow");

        region.Should().NotBeSameAs(flow, "the held code runs in the lock's region");
        region!.IsRegion.Should().BeTrue();
        claimedSync.Should().BeNull("a take touches only the state word: the holder is named when first needed (2 interlocked operations a pair)");
        claimFlagSync.Should().BeFalse();
        linkedSync.Should().BeNull("a critical section that has queued nothing is not linked");
        claimedAfterAwait.Should().BeSameAs(flow, "the region's first queued item claimed its holder");
        claimFlagAfterAwait.Should().BeTrue("so that the release clears the field");
        linkedAfterAwait.Should().BeSameAs(flow, "the region queued an item: its holder's child from then on");
        region.Claimant.Should().BeNull("the release of a claimed holding clears the region's field");
        region.LinkedHolder.Should().BeNull("the release removes the link its holding made");
        region.JoinCause.Should().BeNull();
        taken.LockFreePathsOpen.Should().BeTrue("nothing is held and nobody waits");
        flow!.LinksIfAny?.HasDependents.Should().NotBe(true, "no child link is left behind on the holder");
    }

    [Fact]
    public async Task HolderRaisedBeforeTheTake_ASynchronousSectionReadsTheRaisedLevel_ClaimingTheHolderOnlyThen()
    {
        var lk = new PriorityLock();
        await WarmAsync(Scheduler, lk);
        WorkFlow? flow = null, region = null;
        IEscalationNode? claimedBefore = null, claimedAfter = null;
        int level = -1;
        await RunAsync(3, async () =>
        {
            var go = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    flow = CurrentFlow();
                    await go.Task;
                    using (await lk.LockAsync())
                    {
                        region = CurrentFlow();
                        claimedBefore = region.Claimant;
                        level = ((PrioritySynchronizationContext)SynchronizationContext.Current!).EffectiveLevel; // what Checkpoint reads
                        claimedAfter = region.Claimant;
                    }
                },
                level: 0);
            PriorityTask waiter = Scheduler.InvokeAsync(async () => await work, level: 3); // raises the work to 3
            await Yield(); // the waiter runs and joins the work
            go.SetResult();
            await waiter;
        });

        claimedBefore.Should().BeNull("the take named nobody");
        level.Should().Be(3, "reading the region's level claims its holder, whose raise it then reads");
        claimedAfter.Should().BeSameAs(flow);
        region!.Claimant.Should().BeNull("the claimed holding's release cleared the field");
        lk.Semaphore.LockFreePathsOpen.Should().BeTrue();
    }

    [Fact]
    public async Task LockFreeHoldingMovedUnderTheLockByAWaiter_IsClaimedThere_SoItsHoldersRaiseStillReachesTheRegion()
    {
        // The holding is lock-free and unclaimed (its region has queued nothing) when a waiter moves it under the lock, where lock-free
        // claims stop: the move claims it. A raise of the holder above the waiter's level must then reach the region's item.
        var lk = new PriorityLock();
        await WarmAsync(Scheduler, lk);
        var log = new Log();
        WorkFlow? flow = null, region = null;
        IEscalationNode? claimedAlone = null, claimedWithAWaiter = null;
        await RunAsync(3, async () =>
        {
            var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    flow = CurrentFlow();
                    using (await lk.LockAsync())
                    {
                        region = CurrentFlow();
                        holding.SetResult();
                        await io.Task; // registers a continuation, queues nothing yet
                        log.Add("region");
                    }
                },
                level: 0);
            await holding.Task;
            claimedAlone = region!.Claimant;
            PriorityTask second = Scheduler.InvokeAsync(
                async () =>
                {
                    using (await lk.LockAsync())
                    {
                    }
                },
                level: 1);
            await Prioritize(0);
            while (lk.Semaphore.WaitingCount == 0)
            {
                await Yield(); // the level-1 flow runs and queues on the lock
            }

            await Prioritize(3);
            claimedWithAWaiter = region.Claimant;
            PriorityTask waiter = Scheduler.InvokeAsync(
                async () =>
                {
                    await work; // raises the work, and through its claim the region, to 3
                    log.Add("waiter");
                },
                level: 3);
            await Yield(); // the waiter runs and joins the work
            Post(log, 1, "m1");
            Post(log, 2, "m2");
            io.SetResult();
            await waiter;
            await second;
        });

        claimedAlone.Should().BeNull("the region had queued nothing");
        claimedWithAWaiter.Should().BeSameAs(flow, "the waiter moved the holding under the lock, which claimed it");
        log.Entries.Should().Equal("region", "waiter", "m2", "m1");
        region!.Claimant.Should().BeNull();
        region.LinkedHolder.Should().BeNull();
        lk.Semaphore.LockFreePathsOpen.Should().BeTrue();
    }

    [Fact]
    public async Task RaisedBeforeTheSectionsFirstAwait_TheRegionsContinuationRunsAtTheRaisedLevel()
    {
        var lk = new PriorityLock();
        await WarmAsync(Scheduler, lk);
        var log = new Log();
        WorkFlow? region = null;
        IEscalationNode? linkedWhileRaised = null;
        await RunAsync(3, async () =>
        {
            var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    using (await lk.LockAsync())
                    {
                        region = CurrentFlow();
                        holding.SetResult();
                        await io.Task; // the region's first queued item, posted after the raise
                        log.Add("region");
                    }
                },
                level: 0);
            await holding.Task;
            PriorityTask waiter = Scheduler.InvokeAsync(
                async () =>
                {
                    await work; // raises the work (and so its region) to 3
                    log.Add("waiter");
                },
                level: 3);
            await Yield(); // the waiter runs and joins the work
            linkedWhileRaised = region!.LinkedHolder;
            Post(log, 1, "m1");
            Post(log, 2, "m2");
            io.SetResult();
            await waiter;
        });

        linkedWhileRaised.Should().BeNull("the raise found nothing of the region to reach, so it did not link it");
        log.Entries.Should().Equal("region", "waiter", "m2", "m1");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task RaisedAfterTheRegionQueuedAnItem_TheItemMoves(bool nested)
    {
        // nested: the held code takes a second lock, and the item is the inner region's; the raise of the flow must reach it through
        // the outer region, which is linked first.
        var lk = new PriorityLock();
        var inner = new PrioritySemaphore(1, 1);
        await WarmAsync(Scheduler, lk);
        var log = new Log();
        await RunAsync(3, async () =>
        {
            var io = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    using (await lk.LockAsync())
                    {
                        if (nested)
                        {
                            await inner.WaitAsync();
                        }

                        holding.SetResult();
                        await io.Task;
                        log.Add("region");
                        if (nested)
                        {
                            inner.Release();
                        }
                    }
                },
                level: 0);
            await holding.Task;
            Post(log, 1, "m1");
            Post(log, 2, "m2");
            io.SetResult(); // the region's continuation is queued at 0: the work is not raised yet
            await Scheduler.InvokeAsync(
                async () =>
                {
                    await work; // raises the work to 3: the queued continuation must move
                    log.Add("waiter");
                },
                level: 3);
        });

        log.Entries.Should().Equal("region", "waiter", "m2", "m1");
    }

    [Fact]
    public async Task RaisedAfterTheRegionJoinedWork_TheJoinedWorksItemMoves()
    {
        // The region queues nothing of its own before the raise: it waits on work it started, whose first item is queued at 0. The
        // raise of the holder reaches that work through the region, which the join linked.
        var lk = new PriorityLock();
        await WarmAsync(Scheduler, lk);
        var log = new Log();
        await RunAsync(3, async () =>
        {
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask work = Scheduler.InvokeAsync(
                async () =>
                {
                    using PriorityLock.Releaser releaser = await lk.LockAsync();
                    PriorityTask started = Scheduler.InvokeAsync(
                        () =>
                        {
                            log.Add("started");
                            return Task.CompletedTask;
                        },
                        level: 0);
                    holding.SetResult();
                    await started;
                    log.Add("region");
                },
                level: 0);
            await holding.Task;
            Post(log, 1, "m1");
            Post(log, 2, "m2");
            await Scheduler.InvokeAsync(
                async () =>
                {
                    await work;
                    log.Add("waiter");
                },
                level: 3);
        });

        log.Entries.Should().Equal("started", "region", "waiter", "m2", "m1");
    }

    /// <summary>Takes and releases each once in a flow at level 0, so their regions there exist and later takes run lock-free.</summary>
    internal static async Task WarmAsync(PriorityScheduler scheduler, PriorityLock lk, PrioritySemaphore? semaphore = null)
    {
        await scheduler.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                }

                if (semaphore is not null)
                {
                    await semaphore.WaitAsync();
                    semaphore.Release();
                }
            },
            level: 0).WithTimeout("the warm-up");
        lk.Semaphore.LockFreePathsOpen.Should().BeTrue();
    }

    private async Task RunAsync(int level, Func<Task> body)
    {
        await _host.RunOn(level, async () =>
        {
            await body();
            return true;
        }).WithTimeout("the test's body");
        _host.Drain();
    }

    private void Post(Log log, int level, string name) => Scheduler.GetSynchronizationContext(level).Post(_ => log.Add(name), null);

    internal static WorkFlow CurrentFlow() => ((FlowContext)SynchronizationContext.Current!).Flow;
}

public sealed class LockRegionLink_Loop : LockRegionLinkTests
{
    protected override int Threads => 0;
}

public sealed class LockRegionLink_Pool1 : LockRegionLinkTests
{
    protected override int Threads => 1;
}

/// <summary>
/// The region's link racing what it guards ([X-LOCK-FAST], "The region's link"), in seeded rounds on a loop and on a pool of two: the
/// region's first queued item racing a raise of its holder (the item runs once, and at the raised level), and releases racing retakes
/// of one region by two flows (exclusion holds, nothing waits for ever, no link is left behind).
/// </summary>
public class LockRegionLinkRaceTests
{
    private const int Levels = 4;
    private const int Raised = 2; // below the pause's level (the top), so what is queued there waits while paused

    public static TheoryData<int, int, int> LoopAndPoolSeedsAndMaxCounts()
    {
        var data = new TheoryData<int, int, int>();
        foreach (int threads in new[] { 0, 2 })
        {
            for (int seed = 1; seed <= 3; seed++)
            {
                data.Add(threads, seed, 0); // a PriorityLock
                data.Add(threads, seed, 2); // a PrioritySemaphore(1, 2): its claimed holdings end under the lock
            }
        }

        return data;
    }

    public static TheoryData<int, int> LoopAndPoolSeeds()
    {
        var data = new TheoryData<int, int>();
        foreach (int threads in new[] { 0, 2 })
        {
            for (int seed = 1; seed <= 4; seed++)
            {
                data.Add(threads, seed);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(LoopAndPoolSeeds))]
    public async Task RaiseRacingTheRegionsFirstPost_TheItemRunsOnceAtTheRaisedLevel(int threads, int seed)
    {
        SchedulerHost host = SchedulerHost.Create(threads, Levels, $"lock-region-race-{threads}");
        await using var disposeHost = host.BoundedDisposal();
        PriorityScheduler scheduler = host.Scheduler;
        var lk = new PriorityLock();
        await LockRegionLinkTests.WarmAsync(scheduler, lk);
        var random = new Random(seed);
        for (int round = 0; round < 60; round++)
        {
            string where = $"{threads} threads, seed {seed}, round {round}";
            var gate = new TaskCompletionSource(); // completed by the poster: the region's continuation is posted from its thread
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            int ran = 0;
            WorkFlow? region = null;
            PriorityTask work = scheduler.InvokeAsync(
                async () =>
                {
                    using (await lk.LockAsync())
                    {
                        region = LockRegionLinkTests.CurrentFlow();
                        holding.SetResult();
                        await gate.Task;
                        Interlocked.Increment(ref ran);
                    }
                },
                level: 0);
            await holding.Task.WithTimeout($"the take ({where})");
            int postSpin = random.Next(300);
            int raiseSpin = random.Next(300);
            using (host.Pause()) // every thread held above the raised level: what the race queues waits, and its level can be read
            {
                using var start = new ManualResetEventSlim();
                Task poster = Task.Run(() =>
                {
                    start.Wait();
                    Thread.SpinWait(postSpin);
                    gate.SetResult();
                });
                Task raiser = Task.Run(() =>
                {
                    start.Wait();
                    Thread.SpinWait(raiseSpin);
                    SynchronizationContext? before = SynchronizationContext.Current;
                    SynchronizationContext.SetSynchronizationContext(scheduler.GetSynchronizationContext(Raised));
                    try
                    {
                        work.GetAwaiter().UnsafeOnCompleted(() => { }); // as level code at the raised level awaiting the work
                    }
                    finally
                    {
                        SynchronizationContext.SetSynchronizationContext(before);
                    }
                });
                start.Set();
                await Task.WhenAll(poster, raiser).WithTimeout($"the racers ({where})");
                scheduler.GetSnapshot().PendingPerLevel[Raised].Should().BeGreaterThan(
                    0, $"the region's continuation was queued at the raised level or moved there ({where})");
                region!.LinkedHolder.Should().NotBeNull($"the region queued an item, so it is linked ({where})");
            }

            await work.WithTimeout($"the work ({where}; a lost item leaves it waiting)");
            host.Drain();
            ran.Should().Be(1, $"the region's continuation runs exactly once ({where})");
            region!.LinkedHolder.Should().BeNull($"the release removed the link ({where})");
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(2)]
    public async Task ReleasesAndRetakesOfOneRegionByTwoFlows_ExcludeAndLeaveNoLinkBehind(int threads)
    {
        SchedulerHost host = SchedulerHost.Create(threads, Levels, $"lock-region-retake-{threads}");
        await using var disposeHost = host.BoundedDisposal();
        PriorityScheduler scheduler = host.Scheduler;
        // Two flows at one level share the lock's region there; each takes and releases it back to back, sometimes queueing inside
        // (which links it), so a release meets the other's take within a few instructions; level code at 3 raises both meanwhile.
        var lk = new PriorityLock();
        const int Pairs = 3_000;
        int inside = 0, overlaps = 0, count = 0;
        var flows = new WorkFlow?[2];
        var regions = new ConcurrentDictionary<WorkFlow, bool>();
        PriorityTask Loop(int index, int seed) => scheduler.InvokeAsync(
            async () =>
            {
                flows[index] = LockRegionLinkTests.CurrentFlow();
                var random = new Random(seed);
                for (int i = 0; i < Pairs; i++)
                {
                    using (await lk.LockAsync())
                    {
                        if (LockRegionLinkTests.CurrentFlow() is { IsRegion: true } region)
                        {
                            regions.TryAdd(region, true); // (a grant that comes before the await looks goes on in the taker's flow)
                        }

                        if (Interlocked.Increment(ref inside) != 1)
                        {
                            Interlocked.Increment(ref overlaps);
                        }

                        count++;
                        if (random.Next(8) == 0)
                        {
                            await Yield(); // queued in the region: linked for the rest of this holding
                        }

                        Interlocked.Decrement(ref inside);
                    }

                    if (random.Next(16) == 0)
                    {
                        await Yield(); // lets the other flow in on a loop
                    }
                }
            },
            level: 0);

        await host.RunOn(3, async () =>
        {
            PriorityTask first = Loop(0, 1);
            PriorityTask second = Loop(1, 2);
            await Task.Yield();
            await first; // raises both flows to 3 while they run
            await second;
            return true;
        }).WithTimeout("the two flows (a lost grant leaves one waiting)");
        host.Drain();

        overlaps.Should().Be(0, "never two holders inside");
        count.Should().Be(2 * Pairs);
        lk.IsHeld.Should().BeFalse();
        lk.Semaphore.LockFreePathsOpen.Should().BeTrue();
        regions.Should().NotBeEmpty();
        foreach (WorkFlow region in regions.Keys)
        {
            region.LinkedHolder.Should().BeNull("every holding's link is removed at its release");
            region.JoinCause.Should().BeNull("no holder is left in the field");
        }

        foreach (WorkFlow? flow in flows)
        {
            flow!.LinksIfAny?.HasDependents.Should().NotBe(true, "no region is left a child of a flow that released it");
        }
    }

    [Theory]
    [MemberData(nameof(LoopAndPoolSeedsAndMaxCounts))]
    public async Task ClaimsRacingLockFreeTakesAndReleases_LeaveNoClaimOrLinkBehind(int threads, int seed, int semaphoreMax)
    {
        // [X-LOCK-FAST], "The lazy claim": a thread off the scheduler reads the region's floor (which claims a lock-free holding's
        // holder) while a flow takes and releases the lock back to back, sometimes queueing inside (which claims and links), and a flow
        // at another level takes it now and then (which moves a lock-free holding under the lock). A claim that won its race against
        // a lock-free release, or a move, must be cleared by the holding's release; none may be left in the field.
        SchedulerHost host = SchedulerHost.Create(threads, Levels, $"lock-claim-race-{threads}");
        await using var disposeHost = host.BoundedDisposal();
        PriorityScheduler scheduler = host.Scheduler;
        var lk = new PriorityLock();
        PrioritySemaphore? semaphore = semaphoreMax == 0 ? null : new PrioritySemaphore(1, semaphoreMax);
        await LockRegionLinkTests.WarmAsync(scheduler, lk, semaphore);
        PrioritySemaphore taken = semaphore ?? lk.Semaphore;

        const int MinPairs = 2_000, MaxPairs = 200_000, MinClaims = 20;
        int inside = 0, overlaps = 0, claimsSeen = 0, pairs = 0;
        WorkFlow? region = null, flow = null;
        using var stop = new CancellationTokenSource();
        using var signal = new SemaphoreSlim(0);
        void Inside()
        {
            if (Interlocked.Increment(ref inside) != 1)
            {
                Interlocked.Increment(ref overlaps);
            }

            Interlocked.Decrement(ref inside);
        }

        PriorityTask holder = scheduler.InvokeAsync(
            async () =>
            {
                flow = LockRegionLinkTests.CurrentFlow();
                var random = new Random(seed);
                while (pairs < MinPairs || (Volatile.Read(ref claimsSeen) < MinClaims && pairs < MaxPairs))
                {
                    PriorityLock.Releaser releaser = default;
                    if (semaphore is null)
                    {
                        releaser = await lk.LockAsync(); // inline: the region is the rest of the method that awaits the take
                    }
                    else
                    {
                        await semaphore.WaitAsync();
                    }

                    Volatile.Write(ref region, LockRegionLinkTests.CurrentFlow());
                    if (Interlocked.Increment(ref inside) != 1)
                    {
                        Interlocked.Increment(ref overlaps);
                    }

                    Thread.SpinWait(random.Next(200)); // a window for the reader's claim
                    if (random.Next(8) == 0)
                    {
                        if (random.Next(2) == 0)
                        {
                            signal.Release(); // the other flow will wait on this holding, moving it under the lock
                        }

                        await Yield(); // queued in the region: claimed and linked, if the reader has not claimed it already
                    }

                    Interlocked.Decrement(ref inside);

                    if (semaphore is null)
                    {
                        releaser.Dispose();
                    }
                    else
                    {
                        semaphore.Release();
                    }

                    pairs++;
                    if (random.Next(16) == 0)
                    {
                        await Yield(); // lets the other flow in on a loop
                    }
                }
            },
            level: 0);
        PriorityTask other = scheduler.InvokeAsync(
            async () =>
            {
                while (true)
                {
                    try
                    {
                        await signal.WaitAsync(stop.Token);
                    }
                    catch (OperationCanceledException)
                    {
                        return;
                    }

                    if (semaphore is null)
                    {
                        using (await lk.LockAsync())
                        {
                            Inside();
                        }
                    }
                    else
                    {
                        await semaphore.WaitAsync();
                        Inside();
                        semaphore.Release();
                    }
                }
            },
            level: 1);
        Task reader = Task.Run(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                if (Volatile.Read(ref region) is { } seen)
                {
                    _ = seen.Floor; // claims the lock-free holding's holder, if there is one
                    if (taken.LockFreeHoldingClaimed)
                    {
                        Interlocked.Increment(ref claimsSeen);
                    }
                }
            }
        });

        await holder.Task.WithTimeout($"the holder's pairs ({threads} threads, seed {seed})");
        stop.Cancel();
        await other.Task.WithTimeout("the other flow");
        await reader.WithTimeout("the reader");
        host.Drain();

        overlaps.Should().Be(0, "never two holders inside");
        claimsSeen.Should().BeGreaterThan(0, "the reader claimed lock-free holdings (else the race was not run)");
        taken.CurrentCount.Should().Be(1);
        taken.LockFreePathsOpen.Should().BeTrue("nothing is held and nobody waits");
        region!.Claimant.Should().BeNull("every claimed holding's release cleared the field");
        region.LinkedHolder.Should().BeNull("and removed the link its holding made");
        flow!.LinksIfAny?.HasDependents.Should().NotBe(true, "no region is left a child of the flow that released it");
    }
}

/// <summary>A timer made in a held region fires through it ([X-LOCK-FAST], "The region's link"): the region links when the timer is
/// made, and the firing of a raised holder's region runs at the raised level. On a loop with a clock moved by hand.</summary>
public class LockRegionLinkTimerTests
{
    [Fact]
    public async Task DelayMadeInTheRegion_LinksIt_AndFiresAtTheRaisedLevel()
    {
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 4, TimeProvider = clock });
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityContext context = loop.Context;
        var lk = new PriorityLock();
        await LockRegionLinkTests.WarmAsync(context, lk);
        var log = new ConcurrentQueue<string>();
        WorkFlow? flow = null;
        IEscalationNode? linkedBeforeTheDelay = null, linkedWithTheDelay = null;
        await context.RunOn(3, async () =>
        {
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask work = context.InvokeAsync(
                async () =>
                {
                    flow = LockRegionLinkTests.CurrentFlow();
                    using (await lk.LockAsync())
                    {
                        WorkFlow region = LockRegionLinkTests.CurrentFlow();
                        linkedBeforeTheDelay = region.LinkedHolder;
                        ValueTask delay = Delay(TimeSpan.FromSeconds(1)); // fires through the region
                        linkedWithTheDelay = region.LinkedHolder;
                        holding.SetResult();
                        await delay;
                        log.Enqueue("region");
                    }
                },
                level: 0);
            await holding.Task;
            PriorityTask waiter = context.InvokeAsync(
                async () =>
                {
                    await work; // raises the work to 3 before the firing
                    log.Enqueue("waiter");
                },
                level: 3);
            await Yield();
            context.GetSynchronizationContext(1).Post(_ => log.Enqueue("m1"), null);
            context.GetSynchronizationContext(2).Post(_ => log.Enqueue("m2"), null);
            clock.Advance(TimeSpan.FromSeconds(1));
            await waiter;
        }).WithTimeout("the raised work");
        await context.RunOn(0, () => { }).WithTimeout("the items below");

        linkedBeforeTheDelay.Should().BeNull();
        linkedWithTheDelay.Should().BeSameAs(flow, "a timer that will fire through the region links it when it is made");
        log.Should().Equal("region", "waiter", "m2", "m1");
    }
}
