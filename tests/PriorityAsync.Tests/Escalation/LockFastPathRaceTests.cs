using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Escalation;

/// <summary>
/// The lock-free take and release of an uncontended <see cref="PriorityLock"/> or <see cref="PrioritySemaphore"/> racing the locked
/// path ([X-LOCK-FAST] in docs/design.md), in seeded rounds: releases race waiters that arrive at every level, from plain level code and
/// flows on a loop, from a pool and from off every scheduler; cancellations and timeouts race grants. A lost grant leaves a waiter
/// waiting (the bounded wait fails) or a permit missing at the end; a doubled grant puts more holders inside than there are permits
/// (or loses an unguarded update), or leaves a permit too many. Each failure names its kind and seed.
/// </summary>
public class LockFastPathRaceTests
{
    private const int Levels = 4;

    public static TheoryData<string, int> Seeds()
    {
        var data = new TheoryData<string, int>();
        foreach (string kind in new[] { "lock", "semaphore(1)", "semaphore(2)" })
        {
            for (int seed = 1; seed <= 4; seed++)
            {
                data.Add(kind, seed);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public async Task ReleasesRacingArrivalsAtEveryLevel_NoGrantIsLostOrDoubled(string kind, int seed)
    {
        var subject = new Subject(kind);
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        await using var disposeLoop = loop.BoundedDisposal();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = Levels });
        await using var disposePool = pool.BoundedDisposal();
        var random = new Random(seed);
        var workers = new List<Task>();
        for (int w = 0; w < 10; w++)
        {
            int workerSeed = random.Next();
            int level = random.Next(Levels);
            Func<Task> body = () => subject.WorkAsync(new Random(workerSeed), rounds: 150);
            workers.Add((w % 5) switch
            {
                0 => loop.Context.InvokeAsync(body, level).Task, // a flow on the loop
                1 => InLevelCode(loop.Context.GetSynchronizationContext(level), body), // plain level code on the loop
                2 => pool.InvokeAsync(body, level).Task, // a flow on the pool
                3 => InLevelCode(pool.GetSynchronizationContext(level), body), // plain level code on the pool
                _ => Task.Run(body), // off every scheduler
            });
        }

        await Task.WhenAll(workers).WithTimeout($"the workers of {kind}, seed {seed} (a lost grant leaves one waiting)");
        subject.ShouldBeConsistent(kind, seed);
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public async Task CancellationsAndTimeoutsRacingGrants_EveryWaiterEndsOnce_NoPermitIsLost(string kind, int seed)
    {
        var subject = new Subject(kind);
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        await using var disposeLoop = loop.BoundedDisposal();
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { ThreadCount = 2, Levels = Levels });
        await using var disposePool = pool.BoundedDisposal();
        var random = new Random(seed);
        for (int round = 0; round < 40; round++)
        {
            string where = $"{kind}, seed {seed}, round {round}";
            var releases = new List<Action>();
            for (int i = 0; i < subject.Permits; i++)
            {
                releases.Add(await subject.TakeAsync(Timeout.Infinite, CancellationToken.None) ?? throw new InvalidOperationException(where));
            }

            int waiters = 1 + random.Next(4);
            var outcomes = new Outcomes();
            var sources = new List<CancellationTokenSource>();
            var tasks = new List<Task>();
            for (int i = 0; i < waiters; i++)
            {
                var cancel = new CancellationTokenSource();
                sources.Add(cancel);
                int timeout = random.Next(3) == 0 ? random.Next(3) : Timeout.Infinite; // 0, 1 or 2 ms on the scheduler's clock, or none
                Func<Task> wait = () => subject.WaitOnceAsync(timeout, outcomes, cancel.Token);
                int level = random.Next(Levels);
                tasks.Add((i % 3) switch
                {
                    0 => loop.Context.InvokeAsync(wait, level).Task,
                    1 => pool.InvokeAsync(wait, level).Task,
                    _ => Task.Run(wait),
                });
            }

            await TestTimeout.UntilAsync(() => subject.WaitingCount + outcomes.Ended == waiters, $"the waiters to queue ({where})");
            int releaseSpin = random.Next(400);
            int cancelSpin = random.Next(400);
            bool[] cancelled = [.. sources.Select(_ => random.Next(2) == 0)];
            using var start = new ManualResetEventSlim();
            Task releaser = Task.Run(() =>
            {
                start.Wait();
                Thread.SpinWait(releaseSpin);
                foreach (Action release in releases)
                {
                    release();
                }
            });
            Task canceller = Task.Run(() =>
            {
                start.Wait();
                Thread.SpinWait(cancelSpin);
                for (int i = 0; i < sources.Count; i++)
                {
                    if (cancelled[i])
                    {
                        sources[i].Cancel();
                    }
                }
            });
            start.Set();
            await Task.WhenAll([releaser, canceller, .. tasks]).WithTimeout($"the waiters ({where}; a lost grant leaves one waiting)");
            foreach (CancellationTokenSource source in sources)
            {
                source.Dispose();
            }

            outcomes.Ended.Should().Be(waiters, $"every waiter ends once ({where})");
            (outcomes.Granted + outcomes.Cancelled + outcomes.TimedOut).Should().Be(waiters, where);
            subject.ShouldBeConsistent(kind, seed);
        }
    }

    [Theory]
    [InlineData("lock")]
    [InlineData("semaphore(1)")]
    [InlineData("semaphore(2)")]
    public async Task TightTakeReleaseLoops_OnThreadsAndALoop_NoGrantIsLostOrDoubled(string kind)
    {
        // The narrowest windows: threads off every scheduler take and release back to back (lock-free whenever they find it free,
        // under the lock whenever another holds it), so releases and arrivals meet within a few instructions; a loop takes it too.
        var subject = new Subject(kind);
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        await using var disposeLoop = loop.BoundedDisposal();
        const int Pairs = 5_000;
        int[] done = new int[4];
        var threads = new List<Task>();
        for (int t = 0; t < 3; t++)
        {
            int thread = t;
            threads.Add(Task.Factory.StartNew(
                () =>
                {
                    var random = new Random(thread + 1);
                    for (int i = 0; i < Pairs; i++)
                    {
                        ValueTask<Action?> take = subject.TakeAsync(Timeout.Infinite, CancellationToken.None);
                        Action release = (take.IsCompleted ? take.Result : take.AsTask().GetAwaiter().GetResult())!;
                        subject.Inside(random, spinAtMost: 2);
                        release();
                        Volatile.Write(ref done[thread], i + 1);
                    }
                },
                CancellationToken.None,
                TaskCreationOptions.LongRunning,
                TaskScheduler.Default));
        }

        threads.Add(loop.Context.InvokeAsync(() => subject.WorkAsync(new Random(7), rounds: 500, done: i => Volatile.Write(ref done[3], i)), level: 3).Task);
        Task all = Task.WhenAll(threads);
        int[] seen = new int[done.Length];
        while (await Task.WhenAny(all, Task.Delay(TestTimeout.Unexpected)) != all)
        {
            // Only no progress at all in the bound is a lost grant; a loaded machine may just be slow.
            int[] now = [.. done.Select(d => Volatile.Read(ref d))];
            now.Should().NotEqual(seen, $"the tight loops of {kind} made no progress in {TestTimeout.Unexpected.TotalSeconds} s (a lost grant leaves one waiting): {subject.Describe()}");
            seen = now;
        }

        await all;
        subject.ShouldBeConsistent(kind, seed: 0);
    }

    /// <summary>Runs <paramref name="body"/> as plain level code (a posted callback, outside any flow) of <paramref name="context"/>.</summary>
    private static Task InLevelCode(SynchronizationContext context, Func<Task> body)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        context.Post(_ => _ = Forward(body, done), null);
        return done.Task;

        static async Task Forward(Func<Task> body, TaskCompletionSource done)
        {
            try
            {
                await body();
                done.SetResult();
            }
            catch (Exception ex)
            {
                done.SetException(ex);
            }
        }
    }

    private sealed class Outcomes
    {
        private int _granted;
        private int _cancelled;
        private int _timedOut;

        public int Granted => Volatile.Read(ref _granted);

        public int Cancelled => Volatile.Read(ref _cancelled);

        public int TimedOut => Volatile.Read(ref _timedOut);

        public int Ended => Granted + Cancelled + TimedOut;

        public void AddGranted() => Interlocked.Increment(ref _granted);

        public void AddCancelled() => Interlocked.Increment(ref _cancelled);

        public void AddTimedOut() => Interlocked.Increment(ref _timedOut);
    }

    /// <summary>The lock or semaphore under test, and what its holders saw inside.</summary>
    private sealed class Subject
    {
        private readonly PriorityLock? _lock;
        private readonly PrioritySemaphore? _semaphore;
        private int _inside;
        private int _overlaps;
        private int _entered;
        private int _guarded;

        public Subject(string kind)
        {
            Permits = kind == "semaphore(2)" ? 2 : 1;
            if (kind == "lock")
            {
                _lock = new PriorityLock { Name = "race" };
            }
            else
            {
                _semaphore = new PrioritySemaphore(Permits, Permits) { Name = "race" };
            }
        }

        public int Permits { get; }

        public int WaitingCount => _lock?.WaitingCount ?? _semaphore!.WaitingCount;

        private PrioritySemaphore Semaphore => _lock?.Semaphore ?? _semaphore!;

        /// <summary>Takes a permit (a lock has no timeout: a finite one becomes a token that cancels then); returns its release, or null
        /// when the wait timed out.</summary>
        public async ValueTask<Action?> TakeAsync(int timeout, CancellationToken cancellationToken)
        {
            if (_lock is not null)
            {
                using var timer = timeout == Timeout.Infinite ? null : CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
                timer?.CancelAfter(timeout);
                try
                {
                    PriorityLock.Releaser releaser = await _lock.LockAsync(timer?.Token ?? cancellationToken);
                    return releaser.Dispose;
                }
                catch (OperationCanceledException) when (timer is not null && !cancellationToken.IsCancellationRequested)
                {
                    return null;
                }
            }

            PrioritySemaphore semaphore = _semaphore!;
            return await semaphore.WaitAsync(timeout, cancellationToken) ? () => semaphore.Release() : null;
        }

        /// <summary>One worker: takes and releases at once (the lock-free paths, racing arrivals), holds across an await, or races a
        /// cancellation or a short timeout.</summary>
        public async Task WorkAsync(Random random, int rounds, Action<int>? done = null)
        {
            for (int i = 0; i < rounds; i++)
            {
                done?.Invoke(i);
                int roll = random.Next(100);
                if (roll < 55)
                {
                    Action release = (await TakeAsync(Timeout.Infinite, CancellationToken.None))!;
                    Inside(random);
                    release();
                }
                else if (roll < 75)
                {
                    Action release = (await TakeAsync(Timeout.Infinite, CancellationToken.None))!;
                    Inside(random);
                    if (SynchronizationContext.Current is null)
                    {
                        await Task.Yield();
                    }
                    else
                    {
                        await Yield();
                    }

                    Inside(random);
                    release();
                }
                else if (roll < 90)
                {
                    using var cancel = new CancellationTokenSource();
                    int spin = random.Next(300);
                    Task canceller = Task.Run(() =>
                    {
                        Thread.SpinWait(spin);
                        cancel.Cancel();
                    });
                    await WaitOnceAsync(Timeout.Infinite, outcomes: null, cancel.Token);
                    await canceller;
                }
                else
                {
                    await WaitOnceAsync(random.Next(2), outcomes: null, CancellationToken.None);
                }
            }
        }

        /// <summary>One wait that may be granted, cancelled or time out; granted, it goes inside and releases.</summary>
        public async Task WaitOnceAsync(int timeout, Outcomes? outcomes, CancellationToken cancellationToken)
        {
            Action? release;
            try
            {
                release = await TakeAsync(timeout, cancellationToken);
            }
            catch (OperationCanceledException)
            {
                outcomes?.AddCancelled();
                return;
            }

            if (release is null)
            {
                outcomes?.AddTimedOut();
                return;
            }

            Inside(new Random(timeout));
            release();
            outcomes?.AddGranted();
        }

        public string Describe() => $"{Semaphore}; {Volatile.Read(ref _inside)} inside now, {Volatile.Read(ref _entered)} entries";

        public void ShouldBeConsistent(string kind, int seed)
        {
            string where = $"{kind}, seed {seed}: {Semaphore}";
            Volatile.Read(ref _overlaps).Should().Be(0, $"never more holders than permits ({where})");
            if (Permits == 1)
            {
                Volatile.Read(ref _guarded).Should().Be(Volatile.Read(ref _entered), $"no update inside is lost ({where})");
            }

            Semaphore.CurrentCount.Should().Be(Permits, $"every permit is back, none made ({where})");
            Semaphore.WaitingCount.Should().Be(0, where);
            Semaphore.LockFreePathsOpen.Should().BeTrue($"nothing held and nobody waiting opens the lock-free paths again ({where})");
            Semaphore.ToString().Should().EndWith($"{Permits} free, 0 held, 0 waiting");

            ValueTask<Action?> again = TakeAsync(Timeout.Infinite, CancellationToken.None);
            if (!again.IsCompletedSuccessfully)
            {
                throw new InvalidOperationException($"An uncontended take did not complete at once ({where}).");
            }

            again.Result!();
            Semaphore.CurrentCount.Should().Be(Permits, where);
        }

        public void Inside(Random random, int spinAtMost = 40)
        {
            int spin = random.Next(spinAtMost);
            if (Interlocked.Increment(ref _inside) > Permits)
            {
                Interlocked.Increment(ref _overlaps);
            }

            int read = Volatile.Read(ref _guarded);
            Thread.SpinWait(spin);
            Volatile.Write(ref _guarded, read + 1); // a lost update if two were inside a permit of one
            Interlocked.Increment(ref _entered);
            Interlocked.Decrement(ref _inside);
        }
    }
}
