using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests;

/// <summary>
/// The hot path allocates nothing in steady state: Post + dispatch, cross-thread Post, Send, and <c>await Prioritize</c>.
/// Bytes are measured with <see cref="GC.GetAllocatedBytesForCurrentThread"/> around a warm loop (vs-threading's CheckGCPressure);
/// the budget is a few bytes per item, far below one object (24 B) per item.
/// </summary>
/// <remarks>
/// Warm-up matters: each level's ConcurrentQueue grows by doubling segments until one segment holds the peak backlog
/// (100k items posted before any runs), and keeps that segment as a ring buffer afterwards. Until then a burst allocates
/// about 40 B per slot of the next segment; after it, nothing. So the steady state is "after the peak backlog was seen once",
/// and the memory a level keeps is bounded by about 40 B times the largest backlog it has had (rounded up to a power of two).
/// </remarks>
public class AllocationTests
{
    private const int Items = 100_000;
    private const double BudgetBytesPerItem = 2.0;

    private static readonly SendOrPostCallback s_noop = static _ => { };

    [Fact]
    public async Task PostAndDispatch_FromLoopThread_AllocatesNothingPerItem()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerItem = await loop.Context.RunOn(0, async () =>
        {
            var sc = new[] { loop.Context.GetSynchronizationContext(0), loop.Context.GetSynchronizationContext(1), loop.Context.GetSynchronizationContext(2) };
            for (int warm = 0; warm < 3; warm++)
            {
                await PostAndDrain(sc); // warm-up: segments double until one holds the peak backlog
            }

            long before = GC.GetAllocatedBytesForCurrentThread();
            await PostAndDrain(sc);
            long after = GC.GetAllocatedBytesForCurrentThread();
            return (after - before) / (double)Items;
        }).WithTimeout("the measurement");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem, "Post and dispatch allocate nothing per item (measured on the loop thread, which does both)");

        static async Task PostAndDrain(PrioritySynchronizationContext[] sc)
        {
            for (int i = 0; i < Items; i++)
            {
                sc[i % 3].Post(s_noop, null);
            }

            await Yield(); // at level 0 this runs after every level-1 and level-2 item, and after the older level-0 items
        }
    }

    [Fact]
    public async Task Post_FromAnotherThread_AllocatesNothingPerItemOnTheProducer()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var sc = loop.Context.GetSynchronizationContext(1);
        double bytesPerItem = 0;
        TestTimeout.OnOwnThread(() =>
        {
            // The loop is held at a gate during every round, so the backlog is exactly Items whatever the scheduling: the first
            // rounds grow the segment to it, the last one is measured.
            for (int round = 0; round < 4; round++)
            {
                long before;
                long after;
                using (loop.Context.PauseLoop())
                {
                    before = GC.GetAllocatedBytesForCurrentThread();
                    for (int i = 0; i < Items; i++)
                    {
                        sc.Post(s_noop, null);
                    }

                    after = GC.GetAllocatedBytesForCurrentThread();
                }

                loop.Context.Drain();
                bytesPerItem = (after - before) / (double)Items;
            }
        }, "producer");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem);
    }

    [Fact]
    public async Task Send_FromAnotherThread_AllocatesNothingPerCallInSteadyState()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var sc = loop.Context.GetSynchronizationContext(0);
        var bursts = new List<double>();
        TestTimeout.OnOwnThread(() =>
        {
            const int Calls = 2_000;
            sc.Send(s_noop, null); // warm-up: the thread's cached waiter
            for (int burst = 0; burst < 3; burst++)
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < Calls; i++)
                {
                    sc.Send(s_noop, null);
                }

                bursts.Add((GC.GetAllocatedBytesForCurrentThread() - before) / (double)Calls);
            }
        }, "sender");

        // The least of three bursts: an allocation per call shows in every burst, whereas a one-time cost on the sender does not
        // (in a full run of the suite under load one burst once counted 3.9 B per call, 7.8 KB in all, a size no per-call
        // allocation of 2,000 calls has).
        bursts.Min().Should().BeLessThan(BudgetBytesPerItem, "bytes per call in each burst: {0}", string.Join(", ", bursts));
    }

    [Fact]
    public async Task AwaitPrioritize_SynchronousSwitch_AllocatesNothing()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerAwait = await loop.Context.RunOn(0, async () =>
        {
            await Switch(1_000);
            long before = GC.GetAllocatedBytesForCurrentThread();
            await Switch(Items);
            return (GC.GetAllocatedBytesForCurrentThread() - before) / (2.0 * Items);
        }).WithTimeout("the measurement");

        bytesPerAwait.Should().BeLessThan(BudgetBytesPerItem);

        static async Task Switch(int n)
        {
            for (int i = 0; i < n; i++)
            {
                await Prioritize(2); // nothing queued above: completes synchronously
                await Prioritize(1);
            }
        }
    }

    [Fact]
    public async Task AwaitYield_QueuedEveryTime_AllocatesOnlyTheStateMachineBoxOnce()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerAwait = await loop.Context.RunOn(1, async () =>
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            await YieldMany(Items); // one box for YieldMany, then every await reuses it
            return (GC.GetAllocatedBytesForCurrentThread() - before) / (double)Items;
        }).WithTimeout("the measurement");

        bytesPerAwait.Should().BeLessThan(BudgetBytesPerItem, "each queued await reuses the method's box: 0 B per await");

        static async Task YieldMany(int n)
        {
            for (int i = 0; i < n; i++)
            {
                await Yield();
            }
        }
    }

    // ---- ExecutionContext per item (E1): a poster with an AsyncLocal set still costs nothing per item ------------------------------

    private static readonly AsyncLocal<object?> s_message = new();

    [Fact]
    public async Task PostAndDispatch_FromLoopThread_WithAnAsyncLocalSet_AllocatesNothingPerItem()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerItem = await loop.Context.RunOn(0, async () =>
        {
            s_message.Value = new object(); // as a traced worker's Activity would be: every post captures a non-default context
            var sc = new[] { loop.Context.GetSynchronizationContext(0), loop.Context.GetSynchronizationContext(1), loop.Context.GetSynchronizationContext(2) };
            for (int warm = 0; warm < 3; warm++)
            {
                await PostAndDrain(sc);
            }

            long before = GC.GetAllocatedBytesForCurrentThread();
            await PostAndDrain(sc);
            long after = GC.GetAllocatedBytesForCurrentThread();
            return (after - before) / (double)Items;
        }).WithTimeout("the measurement");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem, "the captured context travels in the queue slot, not in an object");

        static async Task PostAndDrain(PrioritySynchronizationContext[] sc)
        {
            for (int i = 0; i < Items; i++)
            {
                sc[i % 3].Post(s_noop, null);
            }

            await Yield();
        }
    }

    [Fact]
    public async Task Post_FromAnotherThread_WithAnAsyncLocalSet_AllocatesNothingPerItemOnTheProducer()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var sc = loop.Context.GetSynchronizationContext(0);
        double bytesPerItem = 0;
        TestTimeout.OnOwnThread(() =>
        {
            s_message.Value = new object();
            for (int round = 0; round < 4; round++)
            {
                long before;
                long after;
                using (loop.Context.PauseLoop())
                {
                    before = GC.GetAllocatedBytesForCurrentThread();
                    for (int i = 0; i < Items; i++)
                    {
                        sc.Post(s_noop, null);
                    }

                    after = GC.GetAllocatedBytesForCurrentThread();
                }

                loop.Context.Drain();
                bytesPerItem = (after - before) / (double)Items;
            }
        }, "producer");

        bytesPerItem.Should().BeLessThan(BudgetBytesPerItem);
    }

    // ---- Priority locks --------------------------------------------------------------------------------------------------------------

    [Theory]
    [InlineData("level code")]
    [InlineData("work nobody awaits")]
    [InlineData("awaited work")]
    public async Task UncontendedLockAndSemaphore_AllocateNothing(string where)
    {
        const int pairs = 20_000;
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeLoop = loop.BoundedDisposal();
        var lk = new PriorityLock();
        var semaphore = new PrioritySemaphore(2, 2);

        async Task<double> TakeAndRelease()
        {
            for (int warm = 0; warm < 2; warm++)
            {
                await Pairs(); // warm-up: the regions' flows and links are made once
            }

            long before = GC.GetAllocatedBytesForCurrentThread();
            await Pairs();
            return (GC.GetAllocatedBytesForCurrentThread() - before) / (double)pairs;
        }

        async Task Pairs()
        {
            for (int i = 0; i < pairs; i++)
            {
                using (await lk.LockAsync())
                {
                }

                await semaphore.WaitAsync();
                semaphore.Release();
            }
        }

        double bytesPerPair = await loop.Context.RunOn(2, async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            switch (where)
            {
                case "level code":
                    return await TakeAndRelease();
                case "work nobody awaits":
                    var result = new TaskCompletionSource<double>();
                    _ = context.InvokeAsync(async () => result.SetResult(await TakeAndRelease()), level: 0);
                    return await result.Task;
                default:
                    return await context.InvokeAsync(TakeAndRelease, level: 0); // awaited from level 2: the work is raised
            }
        }).WithTimeout("the takes and releases");

        bytesPerPair.Should().BeLessThanOrEqualTo(BudgetBytesPerItem, $"an uncontended take and release in {where} allocate nothing");
    }

    // ---- Children (TaskScope) ------------------------------------------------------------------------------------------------------

    [Fact]
    public async Task StartingAChild_AllocatesNoMoreThanTaskRunOnItsCallerAndItsFlow()
    {
        const int children = 10_000;
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();

        // A child, started, run and ended: everything happens on the loop thread, so its counter sees all of it.
        double perChild = await loop.Context.RunOn(0, async () =>
        {
            TaskScope scope = PriorityContext.Current!.Scope;
            for (int warm = 0; warm < 3; warm++)
            {
                for (int i = 0; i < children; i++)
                {
                    scope.Start(static _ => Task.CompletedTask); // warm-up: the level's queue grows to hold the burst once
                }

                await Yield();
            }

            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < children; i++)
            {
                scope.Start(static _ => Task.CompletedTask);
            }

            await Yield(); // every child has run and ended
            return (GC.GetAllocatedBytesForCurrentThread() - before) / (double)children;
        }).WithTimeout("the children");

        // Task.Run: only what its caller allocates (the pool thread's share is not even counted), a lower bound of its cost.
        double perTaskRun = await Task.Run(async () =>
        {
            var tasks = new Task[children];
            for (int i = 0; i < children; i++)
            {
                tasks[i] = Task.Run(static () => Task.CompletedTask);
            }

            await Task.WhenAll(tasks);
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < children; i++)
            {
                tasks[i] = Task.Run(static () => Task.CompletedTask);
            }

            long after = GC.GetAllocatedBytesForCurrentThread();
            await Task.WhenAll(tasks);
            return (after - before) / (double)children;
        }).WithTimeout("Task.Run");

        // Per child, beside a one-off allocation of the whole burst of up to 1 KB (seen: 80 B once, beside another test run: 144.008 B
        // per child); one byte more per child would be 10 KB. A child also carries its flow, one object, so that a wait on it can raise
        // it ([X-FLOW]): that object's exact size is allowed on top, nothing more.
        const double OneOffBytes = 1024;
        perChild.Should().BeLessThanOrEqualTo(
            perTaskRun + FlowBytes(loop.Context) + (OneOffBytes / children),
            $"a child ({perChild:F3} B) must cost no more than Task.Run's caller side ({perTaskRun:F3} B) and its flow ({FlowBytes(loop.Context)} B)");
    }

    /// <summary>The size of one flow object (what a child or an InvokeAsync call carries so that a wait on it can raise it).</summary>
    internal static long FlowBytes(PriorityScheduler scheduler)
    {
        _ = new PriorityAsync.Internal.WorkFlow(scheduler, 0, "warm-up");
        long before = GC.GetAllocatedBytesForCurrentThread();
        _ = new PriorityAsync.Internal.WorkFlow(scheduler, 0, "measured");
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }
}
