// PA0002: the host-driven case blocks the host's thread on purpose: the stall under test.
#pragma warning disable PA0002
using PriorityAsync.Internal;
using PriorityAsync.Tests.Diagnostics;
using PriorityAsync.Tests.HostDriven;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Watchdog;

/// <summary>
/// [O-STALL]: the watchdog's thread sleeps while every watched thread is idle (an idle process is not woken by it), and wakes as
/// soon as one leaves its park, so a thread that blocks after a long idle spell is still reported. In the diagnostics collection:
/// no other test's scheduler runs meanwhile, so every watched thread can be idle.
/// </summary>
[Collection(DiagnosticsCollection.Name)]
public sealed class WatchdogThreadTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromMilliseconds(40);

    [Fact]
    public async Task Run_LoopIdleThenBlocked_SleepsWhileIdleAndReportsTheStall()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Name = "watchdog-sleeps-loop", Levels = 2, StallTimeout = s_timeout });
        await using var disposeLoop = loop.BoundedDisposal();
        var reported = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        loop.Context.StallDetected += (_, e) => reported.TrySetResult(e);
        loop.Context.Drain();
        loop.Context.WaitUntilParked();
        WaitUntilDormant();

        // Blocked first, then work waits behind it: posted together, the more urgent no-op could run before the blocking item.
        StallDetectedEventArgs stall;
        using (loop.Context.PauseLoop())
        {
            loop.Context.GetSynchronizationContext(0).Post(static _ => { }, null);
            stall = await reported.Task.WithTimeout("the stall of a loop that blocked while the watchdog slept");
            WatchdogThread.Shared.IsDormant.Should().BeFalse("a blocked loop is not idle");
        }

        stall.Level.Should().Be(0);
    }

    [Fact]
    public async Task Run_PoolIdleThenBlocked_SleepsWhileIdleAndReportsTheStall()
    {
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = "watchdog-sleeps-pool", Levels = 2, ThreadCount = 1, StallTimeout = s_timeout });
        var reported = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        pool.StallDetected += (_, e) => reported.TrySetResult(e);
        WaitUntilDormant();

        using var gate = new ManualResetEventSlim();
        using var entered = new ManualResetEventSlim();
        pool.GetSynchronizationContext(1).Post(
            _ =>
            {
                entered.Set();
                gate.Wait(TestTimeout.Unexpected);
            },
            null);
        entered.WaitOrFail("the pool's thread to block");
        pool.GetSynchronizationContext(0).Post(static _ => { }, null); // waiting work, which nothing can start
        StallDetectedEventArgs stall = await reported.Task.WithTimeout("the stall of a pool thread that blocked while the watchdog slept");
        gate.Set();

        stall.Level.Should().Be(0);
    }

    [Fact]
    public void Run_HostIdleThenWaitingForADrainItBlocks_SleepsWhileIdleAndReportsTheStall()
    {
        // The host's loop has no thread of its own: the producer that tells the host of work wakes the watchdog. The host's thread
        // then waits for the work without draining (the stall) until the report comes; a report after the test (had the watchdog
        // woken late) only completes a task nothing waits for.
        var reported = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        HostThread.Run(
            host =>
            {
                host.Context.StallDetected += (_, e) => reported.TrySetResult(e);
                WaitUntilDormant();

                Task work = host.Context.InvokeAsync(() => Task.CompletedTask, level: 1);
                Task.WaitAny([work, reported.Task], TestTimeout.Unexpected);
                work.IsCompleted.Should().BeFalse("the work needs a drain, which the host's thread does not make while it waits");
                reported.Task.IsCompleted.Should().BeTrue("the stall of a host's loop that got work while the watchdog slept is reported");
                reported.Task.Result.Level.Should().Be(1);
                host.Driver.Drain();
            },
            options => options.StallTimeout = s_timeout);
    }

    /// <summary>Waits (bounded) until the watchdog's thread sleeps for want of a busy thread to watch.</summary>
    private static void WaitUntilDormant() =>
        SpinWait.SpinUntil(() => WatchdogThread.Shared.IsDormant, TestTimeout.Unexpected)
            .Should().BeTrue("every watched thread is idle: the watchdog's thread sleeps until one is not");
}
