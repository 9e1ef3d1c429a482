// PA0001, PA0002: the watchdog tests block the loop on purpose; their escape timeouts must be pool timers, because the blocked loop fires none of its own.
#pragma warning disable PA0001, PA0002
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.IO;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Watchdog;

/// <summary>
/// The stall watchdog (<see cref="PrioritySchedulerOptions.StallTimeout"/>). The decision logic is tested with made-up clocks
/// (<see cref="Internal.Watchdog.Check"/>); the end-to-end tests only wait for events, bounded, and never assert on elapsed time.
/// </summary>
public sealed class StallDetectionTests
{
    private static readonly TimeSpan s_shortTimeout = TimeSpan.FromMilliseconds(100);

    [Fact]
    public async Task TaskWait_OnLoopForWorkQueuedToSameLoop_StallReportedWithLevelAndAge()
    {
        // The classic sync-over-async deadlock (seed 003, AsyncEx #35): an item on the loop blocks on a task whose continuation is
        // queued to the same loop. The handler breaks the deadlock (the test's way out), so the loop survives to be disposed.
        string name = NewName();
        var options = new PriorityContextOptions { Levels = 3, Name = name, StallTimeout = s_shortTimeout };
        var loop = new PriorityContextThread(options);
        await using var disposeLoop = loop.BoundedDisposal();
        using var escape = new CancellationTokenSource(TestTimeout.Unexpected);
        var reported = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.StallDetected += (_, e) =>
        {
            reported.TrySetResult(e);
            escape.Cancel();
        };

        var blocked = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.GetSynchronizationContext(1).Post(
            _ =>
            {
                try
                {
                    // The continuation after Task.Delay is posted back to level 1 of this loop, which is blocked right here.
                    DelayOnThisLevelAsync().Wait(escape.Token);
                    blocked.TrySetResult(null);
                }
                catch (Exception ex)
                {
                    blocked.TrySetResult(ex);
                }
            },
            null);

        StallDetectedEventArgs stall = await reported.Task.WithTimeout("the watchdog to report the sync-over-async stall");
        stall.Level.Should().Be(1, "the blocked continuation waits at level 1");
        stall.PendingCount.Should().BeGreaterThanOrEqualTo(1);
        stall.StallTimeout.Should().Be(s_shortTimeout);
        stall.WaitingFor.Should().BeGreaterThanOrEqualTo(s_shortTimeout, "a stall is only reported once it is at least the timeout old");

        (await blocked.Task.WithTimeout("the blocked item to be released by the handler")).Should().BeOfType<OperationCanceledException>();

        // The loop is alive again and runs the continuation that was stuck, then new work.
        int level = await loop.Context.GetTaskFactory(2).StartNew(() => PriorityContext.CurrentLevel).WithTimeout("the loop to run work after the stall");
        level.Should().Be(2);
    }

    [Fact]
    public void Run_ResultOnLoopThreadForItsOwnContinuation_StallReported()
    {
        // The same deadlock under PriorityContext.Run: the entry point blocks (as .Result would) the loop it runs on.
        StallDetectedEventArgs? stall = null;
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    using var escape = new CancellationTokenSource(TestTimeout.Unexpected);
                    PriorityContext.Current!.StallDetected += (_, e) =>
                    {
                        stall = e;
                        escape.Cancel();
                    };

                    Task<int> value = ValueAfterDelayAsync();
                    Action result = () => value.Wait(escape.Token); // what value.Result does, with a way out for the test
                    result.Should().Throw<OperationCanceledException>();
                },
                new PriorityContextOptions { Levels = 2, DefaultLevel = 1, StallTimeout = s_shortTimeout }),
            nameof(Run_ResultOnLoopThreadForItsOwnContinuation_StallReported));

        stall.Should().NotBeNull();
        stall!.Level.Should().Be(1, "the continuation of ValueAfterDelayAsync waits at the entry point's level");
    }

    [Fact]
    public async Task TaskWait_SchedulerRefusesToInlineOverMoreUrgentWork_StallReportedAtTheUrgentLevel()
    {
        // StartNew(...).Wait() on the loop is inlined only when nothing more urgent waits; here a level-2 item waits, so the task stays
        // queued behind it and Wait blocks the only thread that could run either.
        var options = new PriorityContextOptions { Levels = 3, Name = NewName(), StallTimeout = s_shortTimeout };
        var loop = new PriorityContextThread(options);
        await using var disposeLoop = loop.BoundedDisposal();
        using var escape = new CancellationTokenSource(TestTimeout.Unexpected);
        var reported = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.StallDetected += (_, e) =>
        {
            reported.TrySetResult(e);
            escape.Cancel();
        };

        int urgentRan = 0;
        int taskRan = 0;
        Task<bool> blocked = loop.Context.GetTaskFactory(0).StartNew(() =>
        {
            PriorityContext.Current!.GetSynchronizationContext(2).Post(_ => urgentRan++, null);
            Task task = PriorityContext.Current.GetTaskFactory(0).StartNew(() => taskRan++);
            try
            {
                task.Wait(escape.Token);
                return false;
            }
            catch (OperationCanceledException)
            {
                return true;
            }
        });

        StallDetectedEventArgs stall = await reported.Task.WithTimeout("the stall report");
        stall.Level.Should().Be(2, "the most urgent waiting item is the level-2 one");
        stall.PendingCount.Should().Be(2);
        (await blocked.WithTimeout("the blocked item")).Should().BeTrue("Wait was released by the handler, not by the task completing");
        await loop.Context.GetTaskFactory(0).StartNew(() => { }).WithTimeout("the loop to run the rest");
        urgentRan.Should().Be(1);
        taskRan.Should().Be(1);
    }

    [Fact]
    public async Task Stall_Reported_RecordedOnPriorityAsyncMeterWithContextAndLevelTags()
    {
        string name = NewName();
        var measurements = new ConcurrentQueue<(string Instrument, double Value, string? Context, int? Level)>();
        using var listener = new MeterListener();
        // Only the two stall instruments: a listener is process-wide, and this class runs beside other tests (it is not in the
        // Diagnostics collection). Enabling the per-item histograms here made every context of the process record a wait and a run
        // per item (boxed tags), which once showed as 77 B per checkpoint in CheckpointAllocationTests running at the same time.
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "PriorityAsync" && instrument.Name is "priorityasync.stalls" or "priorityasync.stall.waiting_time")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Record(instrument, value, tags));
        listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Record(instrument, value, tags));
        listener.Start();

        var options = new PriorityContextOptions { Levels = 2, Name = name, StallTimeout = s_shortTimeout };
        var loop = new PriorityContextThread(options);
        await using var disposeLoop = loop.BoundedDisposal();
        using var release = new ManualResetEventSlim(false);
        var reported = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.StallDetected += (_, _) =>
        {
            reported.TrySetResult();
            release.Set();
        };

        // A blocking item at level 0, and waiting work at level 1.
        using var blocking = new ManualResetEventSlim(false);
        loop.Context.GetSynchronizationContext(0).Post(_ =>
        {
            blocking.Set();
            release.Wait(TestTimeout.Unexpected);
        }, null);
        blocking.WaitOrFail("the blocking item to start");
        loop.Context.GetSynchronizationContext(1).Post(_ => { }, null);

        await reported.Task.WithTimeout("the stall report");
        var mine = measurements.Where(m => m.Context == name).ToList();
        mine.Should().Contain(m => m.Instrument == "priorityasync.stalls" && m.Value == 1 && m.Level == 1);
        mine.Should().Contain(m => m.Instrument == "priorityasync.stall.waiting_time" && m.Value >= s_shortTimeout.TotalSeconds && m.Level == 1);

        void Record<T>(Instrument instrument, T value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
            where T : struct
        {
            string? context = null;
            int? level = null;
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == "priorityasync.context")
                {
                    context = tag.Value as string;
                }
                else if (tag.Key == "priorityasync.level")
                {
                    level = (int?)tag.Value;
                }
            }

            measurements.Enqueue((instrument.Name, Convert.ToDouble(value), context, level));
        }
    }

    [Fact]
    public void Check_ProgressOrIdle_NoEpisode_ThenOneReportPerEpisode()
    {
        var context = new PriorityContext(new PriorityContextOptions { Levels = 3 });
        TimeSpan timeout = TimeSpan.FromSeconds(1);
        using var watchdog = Internal.Watchdog.CreateManual(context.Threads[0], timeout);
        long f = Stopwatch.Frequency;
        long t0 = 1_000 * f;

        // Dispatching: never a stall, however long work waits.
        for (int i = 0; i < 10; i++)
        {
            watchdog.Check(t0 + (i * f), dispatchCount: i, [5, 0, 0]).Should().BeNull();
        }

        // Idle (nothing waiting) with no dispatch: not a stall either.
        for (int i = 10; i < 20; i++)
        {
            watchdog.Check(t0 + (i * f), dispatchCount: 9, [0, 0, 0]).Should().BeNull();
        }

        // Work waits and nothing starts: the first such check opens the episode, reported once it is a timeout old, then not again.
        long start = t0 + (20 * f);
        watchdog.Check(start, 9, [1, 0, 2]).Should().BeNull("the episode starts here");
        watchdog.Check(start + (f / 2), 9, [1, 0, 2]).Should().BeNull("half a timeout old");
        StallDetectedEventArgs? report = watchdog.Check(start + f, 9, [1, 0, 2]);
        report.Should().NotBeNull();
        report!.Level.Should().Be(2, "the most urgent waiting level");
        report.WaitingFor.Should().Be(TimeSpan.FromSeconds(1));
        report.PendingCount.Should().Be(3);
        watchdog.Check(start + (5 * f), 9, [1, 0, 2]).Should().BeNull("one report per episode");

        // Progress ends the episode; a new stall is a new episode with a new report.
        watchdog.Check(start + (6 * f), 10, [1, 0, 0]).Should().BeNull();
        watchdog.Check(start + (7 * f), 10, [1, 0, 0]).Should().BeNull("a new episode starts");
        watchdog.Check(start + (8 * f), 10, [1, 0, 0])!.Level.Should().Be(0);
    }

    [Fact]
    public void CheckInterval_IsAQuarterOfTheTimeout_AtLeastOneMillisecond()
    {
        Internal.Watchdog.CheckInterval(TimeSpan.FromSeconds(2)).Should().Be(TimeSpan.FromMilliseconds(500));
        Internal.Watchdog.CheckInterval(TimeSpan.FromMilliseconds(2)).Should().Be(TimeSpan.FromMilliseconds(1));
    }

    [Fact]
    public void StallTimeout_OnByDefault_TenSeconds_TheSameInTheHostingPackage()
    {
        new PriorityContextOptions().StallTimeout.Should().Be(TimeSpan.FromSeconds(10));
        PrioritySchedulerOptions.DefaultStallTimeout.Should().Be(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task StallTimeoutNull_NoWatchdog_BlockedLoopNotReported()
    {
        // Null turns it off: the loop has no watchdog, so nothing can report it. A loop with one, blocked the same way after it, is
        // reported: the blocked loop without one stayed silent over a span in which a watchdog did speak.
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = NewName(), StallTimeout = null });
        var watched = new PriorityContextThread(new PriorityContextOptions { Name = NewName(), StallTimeout = s_shortTimeout });
        int reports = 0;
        loop.Context.StallDetected += (_, _) => Interlocked.Increment(ref reports);
        var watchedReported = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        watched.Context.StallDetected += (_, _) => watchedReported.TrySetResult();
        using var release = new ManualResetEventSlim(false);
        foreach (PriorityContextThread thread in new[] { loop, watched })
        {
            var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            thread.Context.GetSynchronizationContext(0).Post(
                _ =>
                {
                    entered.SetResult();
                    release.Wait(TestTimeout.Unexpected);
                },
                null);
            await entered.Task.WithTimeout("the loop to block");
            thread.Context.GetSynchronizationContext(1).Post(_ => { }, null); // waiting work, which nothing can start
        }

        loop.Context.WatchdogOf(0).Should().BeNull("StallTimeout = null starts no watchdog");
        await watchedReported.Task.WithTimeout("the watched loop, blocked the same way, to be reported");
        release.Set();
        await loop.DisposeAsync().AsTask().WithTimeout("dispose");
        await watched.DisposeAsync().AsTask().WithTimeout("dispose the watched loop");
        Volatile.Read(ref reports).Should().Be(0);
    }

    [Fact]
    public async Task WaitOnAPriorityDelay_TheOverdueTimerIsWaitingWork_StallReportedAtItsLevel()
    {
        // The loop blocks on a Priority.Delay that only the loop itself can fire: nothing is ever queued (the blocked loop never moves
        // the due timer into its queues), yet the loop is stuck. The watchdog counts the overdue timer as waiting work.
        var options = new PriorityContextOptions { Levels = 3, Name = NewName(), StallTimeout = s_shortTimeout };
        var loop = new PriorityContextThread(options);
        await using var disposeLoop = loop.BoundedDisposal();
        using var release = new ManualResetEventSlim(false);
        var reported = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.StallDetected += (_, e) =>
        {
            reported.TrySetResult(e);
            release.Set();
        };

        loop.Context.GetSynchronizationContext(2).Post(
            _ =>
            {
                Task delay = Priority.Delay(TimeSpan.FromMilliseconds(1)).AsTask();
                WaitHandle.WaitAny([((IAsyncResult)delay).AsyncWaitHandle, release.WaitHandle], TestTimeout.Unexpected); // delay.Wait(), with a way out
            },
            null);

        StallDetectedEventArgs stall = await reported.Task.WithTimeout("the watchdog to report the loop blocked on its own timer");
        stall.Level.Should().Be(2, "the delay was armed at level 2");
        stall.PendingCount.Should().Be(1, "the overdue timer is the one waiting item");
    }

    [Fact]
    public void Run_WaitOnAPriorityDelay_WithTheDefaultOptionsAndNoHandler_IsNotSilent()
    {
        // The default watchdog, nobody listening: the report still reaches standard error. (A short timeout keeps the test quick.)
        var error = new StringWriter();
        TextWriter synchronized = TextWriter.Synchronized(error); // its methods lock the wrapper: read under the same lock
        TextWriter previous = Console.Error;
        Console.SetError(synchronized);
        try
        {
            TestTimeout.OnOwnThread(
                () => PriorityContext.Run(
                    () =>
                    {
                        Task delay = Priority.Delay(TimeSpan.FromMilliseconds(1)).AsTask();
                        var deadline = Stopwatch.StartNew();
                        while (!Written().Contains("has started no item", StringComparison.Ordinal) && deadline.Elapsed < TestTimeout.Unexpected)
                        {
                            delay.Wait(TimeSpan.FromMilliseconds(10)); // never completes: the loop is the one blocked here
                        }
                    },
                    new PriorityContextOptions { Name = "silent-" + Guid.NewGuid().ToString("N")[..8], StallTimeout = s_shortTimeout }),
                "Run");
        }
        finally
        {
            Console.SetError(previous);
        }

        Written().Should().Contain("has started no item").And.Contain(".Wait()").And.Contain("StallTimeout = null");

        string Written()
        {
            lock (synchronized)
            {
                return error.ToString();
            }
        }
    }

    private static async Task DelayOnThisLevelAsync()
    {
        await Task.Delay(1); // captures the level's SynchronizationContext; the continuation is posted back to it
    }

    private static async Task<int> ValueAfterDelayAsync()
    {
        await Task.Delay(1);
        return 42;
    }

    private static string NewName() => "stall-" + Guid.NewGuid().ToString("N")[..8];
}
