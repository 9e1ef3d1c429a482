using System.Collections.Concurrent;
using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Timers;

/// <summary>
/// A <see cref="TimeProvider"/> that throws, given as the scheduler's clock (T4-T6 at the top of Timers/LoopTimers.cs), on both
/// schedulers: met by the scheduler's own thread it faults the scheduler with the provider's own exception (not through
/// UnhandledException), drops what is queued and never escapes a thread; met by a caller that arms a timer it goes to that caller and
/// arms nothing; a call that only disarms takes effect without throwing; at the end every armed timer is still dropped.
/// </summary>
/// <remarks>Without the fix the pool's cases of T4 and T6 end the test process (the exception escapes a pool thread's loop, or the
/// last thread's end): there they cannot fail more gently. The context's cases, T5 and the watchdog's read fail as assertions.</remarks>
public sealed class ThrowingClockTests
{
    private static readonly TimeSpan Never = Timeout.InfiniteTimeSpan;

    public enum Member
    {
        GetTimestamp,
        Change,
    }

    // ---- T4: the scheduler's own thread ------------------------------------------------------------------------------------------

    [Theory]
    [InlineData(false, Member.GetTimestamp)]
    [InlineData(false, Member.Change)]
    [InlineData(true, Member.GetTimestamp)]
    [InlineData(true, Member.Change)]
    public async Task ClockThrows_WhenATimerComesDue_SchedulerFaultsWithTheClocksOwnException_AndDropsWhatIsQueued(bool pool, Member member)
    {
        var clock = new ThrowingClock();
        var failure = new ClockFailure($"{member} failed");
        await using Subject subject = Subject.Create(pool, clock, $"clock-due-{pool}-{member}");
        int unhandled = 0;
        subject.Scheduler.UnhandledException += (_, e) =>
        {
            Interlocked.Increment(ref unhandled);
            e.Handled = true; // a handler that marks everything handled must not keep a scheduler whose clock throws running
        };
        var drops = new ConcurrentQueue<WorkDroppedEventArgs>();
        subject.Scheduler.WorkDropped += (_, e) => drops.Enqueue(e);
        Task<Exception?> delay = await subject.ArmDelay(TimeSpan.FromMinutes(1));

        int ranLate = 0;
        using (subject.HoldEveryThread())
        {
            subject.Scheduler.GetSynchronizationContext(0).Post(_ => ranLate = 1, "queued behind");
            clock.Fail(member, failure);
            clock.Advance(TimeSpan.FromMinutes(1)); // the clock's timer fires: the flag is raised, and each thread sees it after its item
        }

        Exception fault = await subject.Faulted();
        fault.Should().BeSameAs(failure, "the scheduler faults with the provider's own exception, unwrapped");
        fault.StackTrace.Should().Contain(nameof(ThrowingClock), "its stack trace points at the provider");
        subject.Scheduler.State.Should().Be(PrioritySchedulerState.Faulted);
        unhandled.Should().Be(0, "the clock's exception is no item's: UnhandledException is not raised, so no handler can mark it handled");
        ranLate.Should().Be(0, "nothing runs after the fault");
        drops.Should().Contain(e => e.Reason == DropReason.AbandonedAfterFault && Equals(e.State, "queued behind"));
        (await delay.WithTimeout("the pending delay, dropped")).Should().BeOfType<ObjectDisposedException>("the scheduler ended before it fired");
    }

    [Theory]
    [InlineData(false, false)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public async Task ClockThrows_AtTheCheckOfAnAwait_TheMethodDoesNotGoOn_AndTheSchedulerFaults(bool pool, bool checkpoint)
    {
        // Prioritize's inline check and a checkpoint fire the due timers first: the clock throws there, inside the running method.
        var clock = new ThrowingClock();
        var failure = new ClockFailure("GetTimestamp failed");
        await using Subject subject = Subject.Create(pool, clock, $"clock-await-{pool}-{checkpoint}");
        using ITimer timer = subject.Scheduler.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Never);

        Task<Exception?> method = subject.RunOn(0, async () =>
        {
            clock.Fail(Member.GetTimestamp, failure);
            clock.Advance(TimeSpan.FromMinutes(1)); // the clock's timer fires on this thread: the flag is raised while this item runs
            try
            {
                if (checkpoint)
                {
                    await Checkpoint();
                }
                else
                {
                    await Prioritize(0);
                }
            }
            catch (Exception ex)
            {
                return ex;
            }

            return null;
        });

        (await method.WithTimeout("the method")).Should().BeOfType<ObjectDisposedException>(
            "the scheduler faulted at the await's check: the method must not go on, nor see the clock's exception as its own");
        (await subject.Faulted()).Should().BeSameAs(failure);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ClockThrows_TheItemLooksAtTheFlagAgain_NoQueuedItemRunsAfterTheFault(bool pool)
    {
        // The item that met the failure looks at the timers' flag more than once (two ShouldYield, then an inline Prioritize after
        // catching): every look must keep the flag raised, or the loop's next look between items would miss the fault and run on.
        var clock = new ThrowingClock();
        var failure = new ClockFailure("GetTimestamp failed");
        await using Subject subject = Subject.Create(pool, clock, $"clock-looks-{pool}");
        using ITimer timer = subject.Scheduler.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Never);
        int ranAfter = 0;

        Task<Exception?> method = subject.RunOn(0, async () =>
        {
            subject.Scheduler.GetSynchronizationContext(0).Post(_ => Interlocked.Increment(ref ranAfter), "queued behind the failing item");
            clock.Fail(Member.GetTimestamp, failure);
            clock.Advance(TimeSpan.FromMinutes(1));
            _ = ShouldYield; // fires: the clock throws, the scheduler faults
            _ = ShouldYield; // a second look
            try
            {
                await Prioritize(0);
            }
            catch (Exception ex)
            {
                return ex;
            }

            return null;
        });

        (await method.WithTimeout("the method")).Should().BeOfType<ObjectDisposedException>();
        (await subject.Faulted()).Should().BeSameAs(failure);
        Volatile.Read(ref ranAfter).Should().Be(0, "nothing queued runs after the fault, however many times the item looked at the flag");
    }

    // ---- T5: a caller's own call -------------------------------------------------------------------------------------------------

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ClockThrows_WhileACallerArmsATimer_TheCallerGetsIt_AndNothingIsLeftArmed(bool pool)
    {
        // Change, not GetTimestamp: the clock is read before the heap changes, but its timer is pointed after the entry went in.
        const Member member = Member.Change;
        var clock = new ThrowingClock();
        var failure = new ClockFailure("Change failed");
        await using Subject subject = Subject.Create(pool, clock, $"clock-arm-{pool}");
        TimeProvider provider = subject.Scheduler.TimeProvider;
        using var fired = new SemaphoreSlim(0);
        using ITimer earlier = provider.CreateTimer(_ => fired.Release(), null, TimeSpan.FromMinutes(2), Never);
        using ITimer changed = provider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(3), Never);

        // Once each, on the calling thread only: the scheduler's own reads of the clock (after each failure) see a healthy clock.
        Exception? fromDelay = await subject.RunOn(0, async () =>
        {
            clock.FailOnce(member, failure);
            try
            {
                await Delay(TimeSpan.FromMinutes(1)); // throws at once (if it armed, the bounded wait below fails: the clock stands still)
            }
            catch (Exception ex)
            {
                return ex;
            }

            return null;
        }).WithTimeout("Priority.Delay on the scheduler");
        fromDelay.Should().BeSameAs(failure, "Priority.Delay throws the clock's exception to its caller");

        clock.FailOnce(member, failure);
        provider.Invoking(p => p.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Never))
            .Should().Throw<ClockFailure>().Which.Should().BeSameAs(failure);
        clock.FailOnce(member, failure);
        changed.Invoking(t => t.Change(TimeSpan.FromMinutes(1), Never)).Should().Throw<ClockFailure>().Which.Should().BeSameAs(failure);

        subject.ArmedTimerCount.Should().Be(1, "only the earlier timer is armed: the calls that threw armed nothing, and the changed timer was left disarmed");
        clock.Advance(TimeSpan.FromMinutes(3));
        (await fired.WaitAsync(TestTimeout.Unexpected)).Should().BeTrue("the clock's timer was pointed again after each failure, so the earlier timer fires");
        subject.Scheduler.State.Should().Be(PrioritySchedulerState.Running, "the clock threw only in the callers' calls");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ClockThrows_WhileACallerDisarmsATimer_TheCallTakesEffect_WithoutThrowing(bool pool)
    {
        var clock = new ThrowingClock();
        var failure = new ClockFailure("Change failed");
        await using Subject subject = Subject.Create(pool, clock, $"clock-disarm-{pool}");
        TimeProvider provider = subject.Scheduler.TimeProvider;
        using var cancellation = new CancellationTokenSource();
        Task<Exception?> delay = await subject.ArmDelay(TimeSpan.FromMinutes(1), cancellation.Token);
        ITimer disposed = provider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Never);
        using ITimer stopped = provider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Never);

        clock.FailOnce(Member.Change, failure);
        cancellation.Invoking(c => c.Cancel()).Should().NotThrow("the cancellation took the delay out of the heap; re-pointing the clock is the scheduler's");
        (await delay.WithTimeout("the cancelled delay")).Should().BeOfType<TaskCanceledException>("its firing was queued all the same (D1)");
        clock.FailOnce(Member.Change, failure);
        disposed.Invoking(t => t.Dispose()).Should().NotThrow("Dispose does not throw");
        clock.FailOnce(Member.Change, failure);
        stopped.Change(Never, Never).Should().BeTrue("disarming took effect");

        subject.ArmedTimerCount.Should().Be(0);
        await subject.RunOn(0, () => Task.FromResult(true)).WithTimeout("a lap of the scheduler, which fired its timers since");
        subject.Scheduler.State.Should().Be(PrioritySchedulerState.Running, "the clock threw only in the callers' calls");
    }

    // ---- T6: the watchdog, and the end ------------------------------------------------------------------------------------------

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ClockThrows_WhenTheWatchdogLooksForAnOverdueTimer_ItReadsAsNone(bool pool)
    {
        var clock = new ThrowingClock();
        await using Subject subject = Subject.Create(pool, clock, $"clock-watchdog-{pool}");
        using ITimer timer = subject.Scheduler.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Never);
        clock.Fail(Member.GetTimestamp, new ClockFailure("GetTimestamp failed"));

        subject.OverdueTimerLevel().Should().Be(-1, "the watchdog thread (process-wide) must not meet the clock's exception");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ClockTimersDisposeThrows_AtTheEnd_EveryArmedTimerIsStillDropped_AndCompletionFaultsWithIt(bool pool)
    {
        var clock = new ThrowingClock();
        var failure = new ClockFailure("Dispose failed");
        await using Subject subject = Subject.Create(pool, clock, $"clock-end-{pool}");
        var drops = new ConcurrentQueue<WorkDroppedEventArgs>();
        subject.Scheduler.WorkDropped += (_, e) => drops.Enqueue(e);
        Task<Exception?> delay = await subject.ArmDelay(TimeSpan.FromMinutes(1));

        clock.FailDispose = failure;
        (await subject.Faulted()).Should().BeSameAs(failure, "the end reports it as it reports a throwing WorkDropped handler");
        (await delay.WithTimeout("the pending delay, dropped at the end")).Should().BeOfType<ObjectDisposedException>();
        drops.Should().ContainSingle(e => e.Reason == DropReason.TimerArmedAtFinish);
    }

    // ---- The clock, and the scheduler under test ---------------------------------------------------------------------------------

    private sealed class ClockFailure(string message) : Exception(message);

    /// <summary>A <see cref="FakeTimeProvider"/> whose <see cref="GetTimestamp"/> and timers' <see cref="ITimer.Change"/> and
    /// <see cref="IDisposable.Dispose"/> throw on request: a buggy user clock.</summary>
    private sealed class ThrowingClock : TimeProvider
    {
        private readonly FakeTimeProvider _time = new();
        private Failure? _failure;

        public Exception? FailDispose { get; set; }

        public override long TimestampFrequency => _time.TimestampFrequency;

        /// <summary>Every call of <paramref name="member"/>, on any thread, throws <paramref name="exception"/> from now on.</summary>
        public void Fail(Member member, Exception exception) => Volatile.Write(ref _failure, new Failure(member, exception, Thread: null));

        /// <summary>The next call of <paramref name="member"/> on the calling thread throws <paramref name="exception"/>.</summary>
        public void FailOnce(Member member, Exception exception) => Volatile.Write(ref _failure, new Failure(member, exception, Thread.CurrentThread));

        public void Advance(TimeSpan delta) => _time.Advance(delta);

        public override long GetTimestamp()
        {
            ThrowIfFailing(Member.GetTimestamp);
            return _time.GetTimestamp();
        }

        public override DateTimeOffset GetUtcNow() => _time.GetUtcNow();

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) =>
            new Timer(this, _time.CreateTimer(callback, state, dueTime, period));

        private void ThrowIfFailing(Member member)
        {
            Failure? failure = Volatile.Read(ref _failure);
            if (failure is null || failure.Member != member || (failure.Thread is not null && failure.Thread != Thread.CurrentThread))
            {
                return;
            }

            if (failure.Thread is not null)
            {
                Interlocked.CompareExchange(ref _failure, null, failure);
            }

            throw failure.Exception;
        }

        private sealed record Failure(Member Member, Exception Exception, Thread? Thread);

        private sealed class Timer(ThrowingClock clock, ITimer inner) : ITimer
        {
            public bool Change(TimeSpan dueTime, TimeSpan period)
            {
                clock.ThrowIfFailing(Member.Change);
                return inner.Change(dueTime, period);
            }

            public void Dispose()
            {
                if (clock.FailDispose is { } failure)
                {
                    throw failure;
                }

                inner.Dispose();
            }

            public ValueTask DisposeAsync()
            {
                Dispose();
                return default;
            }
        }
    }

    /// <summary>A <see cref="PriorityContextThread"/> or a one-thread <see cref="PriorityThreadPool"/> on <c>clock</c>, without the
    /// stall watchdog (which reads the clock on its own thread: its read has a test of its own). One thread: with more, a thread whose
    /// check came just before the fault may still take one more item (the pool's "Faults"), and the tests assert what is dropped.</summary>
    private sealed class Subject : IAsyncDisposable
    {
        private readonly PriorityContextThread? _loop;
        private readonly PriorityThreadPool? _pool;

        private Subject(PriorityContextThread? loop, PriorityThreadPool? pool)
        {
            _loop = loop;
            _pool = pool;
        }

        public PriorityScheduler Scheduler => (PriorityScheduler?)_loop?.Context ?? _pool!;

        public int ArmedTimerCount => _loop?.Context.ArmedTimerCount ?? _pool!.ArmedTimerCount;

        private Task Completion => _loop?.Completion ?? _pool!.Completion;

        public static Subject Create(bool pool, TimeProvider clock, string name) => pool
            ? new Subject(null, new PriorityThreadPool(new PriorityThreadPoolOptions { Levels = 2, ThreadCount = 1, TimeProvider = clock, StallTimeout = null, Name = name }))
            : new Subject(new PriorityContextThread(new PriorityContextOptions { Levels = 2, TimeProvider = clock, StallTimeout = null, Name = name }), null);

        public int OverdueTimerLevel() => _loop?.Context.OverdueTimerLevel() ?? _pool!.OverdueTimerLevel();

        public Task<T> RunOn<T>(int level, Func<Task<T>> body) => Scheduler.GetTaskFactory(level).StartNew(body).Unwrap();

        /// <summary>Arms a <see cref="Priority.Delay"/> on the scheduler; the task returns what its await threw (null: it completed).</summary>
        public async Task<Task<Exception?>> ArmDelay(TimeSpan delay, CancellationToken cancellationToken = default)
        {
            var armed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Task<Exception?> awaited = RunOn(0, async () =>
            {
                ValueTask pending = Delay(delay, cancellationToken);
                armed.SetResult();
                try
                {
                    await pending;
                }
                catch (Exception ex)
                {
                    return ex;
                }

                return null;
            });
            await armed.Task.WithTimeout("the delay to be armed");
            return awaited;
        }

        /// <summary>Blocks every thread of the scheduler in an item at the top level; disposing releases them.</summary>
        public IDisposable HoldEveryThread()
        {
            int threads = Scheduler.MaximumConcurrency;
            var hold = new Hold(threads);
            for (int i = 0; i < threads; i++)
            {
                Scheduler.GetSynchronizationContext(Scheduler.Levels - 1).Post(static state => ((Hold)state!).Enter(), hold);
            }

            hold.Entered.WaitOrFail("every thread to enter the hold");
            return hold;
        }

        /// <summary>Completes the scheduler and returns the exception its completion faulted with (fails if it did not).</summary>
        public async Task<Exception> Faulted()
        {
            Complete();
            return (await FluentActions.Awaiting(() => Completion.WithTimeout("the scheduler to end")).Should().ThrowAsync<Exception>()).Which;
        }

        public async ValueTask DisposeAsync()
        {
            Complete();
            try
            {
                await Completion.WithTimeout("the scheduler to end");
            }
            catch (ClockFailure)
            {
                // The faults these tests cause are asserted by the tests themselves.
            }
        }

        private void Complete()
        {
            _loop?.Complete();
            _pool?.Complete();
        }

        private sealed class Hold(int threads) : IDisposable
        {
            private readonly ManualResetEventSlim _release = new();

            public CountdownEvent Entered { get; } = new(threads);

            public void Enter()
            {
                Entered.Signal();
                _release.WaitOrFail("the test to release the hold");
            }

            public void Dispose() => _release.Set();
        }
    }
}
