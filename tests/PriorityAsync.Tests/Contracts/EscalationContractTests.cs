using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Contracts;

/// <summary>
/// The escalation contract both schedulers keep ([X-JOIN], [X-LOCK], [X-MOVE]), written once and run on a loop and on pools: with every
/// thread busy with a flood of medium items (level 1), work at level 0 that urgent code (level 2) waits on, through a priority lock or a
/// <see cref="PriorityTask"/>, starts before any medium item that starts after the wait, except the one each thread may already have
/// taken. Counted in items, not time, so it holds at any load; without the raise, the work would wait for the whole flood.
/// </summary>
public abstract class EscalationContractTests : IAsyncLifetime
{
    private SchedulerHost _host = null!;
    private Flood? _flood;

    protected abstract int Threads { get; }

    protected virtual IReadOnlyList<int>? Caps => null;

    private PriorityScheduler Scheduler => _host.Scheduler;

    public Task InitializeAsync()
    {
        _host = SchedulerHost.Create(Threads, levels: 3, $"escalation-contract-{Threads}", Caps);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        if (_flood is not null)
        {
            await _flood.StopAsync();
        }

        await _host.DisposeOrFailAsync();
    }

    [Fact]
    public async Task LockHolderBehindAFlood_AWaiterAtTheTopLevel_ResumesItWithinOneMediumItemPerThread()
    {
        var lk = new PriorityLock { Name = "shared" };
        var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var io = new TaskCompletionSource(); // completed from this thread: the holder's continuation is posted before SetResult returns
        long resumedAt = -1;
        long topRunsBefore = 0, topRunsAtResume = -1;
        Task holder = Scheduler.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                    holding.SetResult();
                    await io.Task; // an I/O call, with the lock held
                    resumedAt = _flood!.Starts;
                    topRunsAtResume = Scheduler.GetSnapshot().RunPerLevel[2];
                }
            },
            level: 0);
        await holding.Task.WithTimeout("the holder to take the lock");
        _flood = Flood.Start(Scheduler, producers: _host.Concurrency);
        await _flood.Running.WithTimeout("the flood");
        Task waiter = Scheduler.InvokeAsync(
            async () =>
            {
                using (await lk.LockAsync())
                {
                }
            },
            level: 2);
        await WaitUntilAsync(() => lk.WaitingCount == 1, "the urgent waiter");

        topRunsBefore = Scheduler.GetSnapshot().RunPerLevel[2];
        io.SetResult();
        long posted = _flood.Starts; // read after the post: this thread may be preempted around SetResult while the flood goes on
        await Task.WhenAll(holder, waiter).WithTimeout("the holder, raised behind the flood, to release the lock");
        AssertResumedAhead(resumedAt - posted, topRunsAtResume - topRunsBefore);
    }

    [Fact]
    public async Task AwaitedInvokeAsyncBehindAFlood_ResumesWithinOneMediumItemPerThread()
    {
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var io = new TaskCompletionSource(); // completed from this thread: the work's continuation is posted before SetResult returns
        long resumedAt = -1;
        long topRunsBefore = 0, topRunsAtResume = -1;
        PriorityTask work = Scheduler.InvokeAsync(
            async () =>
            {
                started.SetResult();
                await io.Task;
                resumedAt = _flood!.Starts;
                topRunsAtResume = Scheduler.GetSnapshot().RunPerLevel[2];
            },
            level: 0);
        await started.Task.WithTimeout("the work to start");
        _flood = Flood.Start(Scheduler, producers: _host.Concurrency);
        await _flood.Running.WithTimeout("the flood");
        Task waiter = Scheduler.InvokeAsync(async () => await work, level: 2);

        // The raise is in the graph once the waiter is suspended on the work (nothing of the work is queued yet, so nothing to move).
        var node = (PriorityAsync.Internal.IEscalationNode)work.Task.AsyncState!;
        await WaitUntilAsync(() => node.Floor == 2, "the waiter's join");
        topRunsBefore = Scheduler.GetSnapshot().RunPerLevel[2];
        io.SetResult();
        long posted = _flood.Starts; // read after the post (see above)
        await waiter.WithTimeout("the awaited work, raised behind the flood");
        AssertResumedAhead(resumedAt - posted, topRunsAtResume - topRunsBefore);
    }

    [Fact]
    public async Task PlainAwaitOfTheSameWork_WaitsForTheFlood()
    {
        // The contrast, and what makes the two above meaningful: without the raise the work waits until the flood ends.
        _flood = Flood.Start(Scheduler, producers: _host.Concurrency);
        await _flood.Running.WithTimeout("the flood");
        bool ranDuringFlood = true;
        Task waiter = Scheduler.InvokeAsync(
            async () =>
            {
                Task plain = Scheduler.InvokeAsync(() => { ranDuringFlood = !_flood.Stopped; return Task.CompletedTask; }, level: 0);
                await plain;
            },
            level: 2);
        await WaitUntilAsync(() => _flood.Starts > 50 * _host.Concurrency, "the flood to go on a while");
        waiter.IsCompleted.Should().BeFalse("a plain Task raises nothing: the work waits behind the flood");
        await _flood.StopAsync();
        await waiter.WithTimeout("the work, once the flood ended");
        ranDuringFlood.Should().BeFalse();
    }

    /// <summary>The raised continuation was dispatched from the top level's queue (the count of that level's runs had grown when it
    /// ran, and nothing else at that level was queued); on one thread, at most the item that thread had already taken started before
    /// it. With more threads the count of flood items proves nothing at any load: while the OS holds the thread that took the
    /// continuation, the others go on running the flood.</summary>
    private void AssertResumedAhead(long floodStartsBetween, long topRunsBetween)
    {
        topRunsBetween.Should().Be(1, "the continuation was queued at its waiter's level, ahead of the flood");
        if (_host.Concurrency == 1)
        {
            floodStartsBetween.Should().BeLessThanOrEqualTo(1, "only the item the thread had already taken may start before it");
        }
    }

    private static async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out waiting for: {what}.");
            }

            await Task.Delay(1);
        }
    }

    /// <summary>Medium items at level 1, one producer per thread, each item a short spin then a Yield, until stopped.</summary>
    private sealed class Flood
    {
        private readonly TaskCompletionSource _running = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private Task[] _producers = [];
        private long _starts;
        private volatile bool _stop;

        public Task Running => _running.Task;

        public long Starts => Interlocked.Read(ref _starts);

        public bool Stopped => _stop;

        public static Flood Start(PriorityScheduler scheduler, int producers)
        {
            var flood = new Flood();
            flood._producers = Enumerable.Range(0, producers).Select(_ => scheduler.InvokeAsync(flood.ProduceAsync, level: 1).Task).ToArray();
            return flood;
        }

        public async Task StopAsync()
        {
            _stop = true;
            await Task.WhenAll(_producers).WithTimeout("the flood to stop");
        }

        private async Task ProduceAsync()
        {
            while (!_stop)
            {
                if (Interlocked.Increment(ref _starts) > 10)
                {
                    _running.TrySetResult();
                }

                long until = Stopwatch.GetTimestamp() + (Stopwatch.Frequency / 50_000); // 20 us of CPU
                while (Stopwatch.GetTimestamp() < until)
                {
                }

                await Yield();
            }
        }
    }
}

public sealed class EscalationContract_Loop : EscalationContractTests
{
    protected override int Threads => 0;
}

public sealed class EscalationContract_Pool1 : EscalationContractTests
{
    protected override int Threads => 1;
}

public sealed class EscalationContract_Pool2 : EscalationContractTests
{
    protected override int Threads => 2;
}

public sealed class EscalationContract_Pool3 : EscalationContractTests
{
    protected override int Threads => 3;
}

/// <summary>A cap forces the pool's locked dispatch mode ([D-POOL]).</summary>
public sealed class EscalationContract_Pool2_Capped222 : EscalationContractTests
{
    protected override int Threads => 2;

    protected override IReadOnlyList<int>? Caps => [2, 2, 2];
}
