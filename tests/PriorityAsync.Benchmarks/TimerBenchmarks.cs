using System;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using static PriorityAsync.Priority;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Loop-owned timers: arming and firing a loop timer, arming and cancelling one, <see cref="Priority.Delay"/>, against
/// <see cref="Task.Delay(TimeSpan)"/> on the pool and a <see cref="System.Threading.Timer"/>; and what a post+drain pays per item
/// while a loop timer is armed and firing.
/// </summary>
/// <remarks>
/// Everything on the loop runs inside one <see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/> per invocation, so the
/// per-operation figures exclude the cross-thread hand-off. The 1 ms delays measure the wait itself (timer resolution and wake-up),
/// not CPU cost: compare them with each other only.
/// </remarks>
[BenchmarkCategory("Timers")]
public class TimerBenchmarks
{
    public const int Ops = 2_000;
    public const int Waits = 20;

    private static readonly TimerCallback s_noop = static _ => { };

    private static readonly SendOrPostCallback s_count = static state => ((TimerBenchmarks)state!)._ran++;

    private static readonly SendOrPostCallback s_done = static state => ((TimerBenchmarks)state!)._done.Set();

    private static readonly SendOrPostCallback s_postBatch = static state =>
    {
        var self = (TimerBenchmarks)state!;
        SynchronizationContext target = SynchronizationContext.Current!;
        for (int i = 0; i < PostDrainBenchmarks.Items; i++)
        {
            target.Post(s_count, self);
        }

        target.Post(s_done, self);
    };

    private readonly ManualResetEventSlim _done = new(false);
    private PriorityContextThread? _plain;
    private PriorityContextThread? _withTimer;
    private ITimer? _periodic;
    private long _ran;

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops, Description = "await Yield() alone (the floor of the next row)")]
    public void Loop_YieldOnly() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Yield();
            }
        },
        new PriorityContextOptions { Levels = 2, DefaultLevel = 0 });

    [Benchmark(OperationsPerInvoke = Ops, Description = "Loop timer: arm (due now) + fire at level 1 + await Yield()")]
    public void LoopTimer_ArmFire() => PriorityContext.Run(
        static async () =>
        {
            int fired = 0;
            using ITimer timer = PriorityContext.Current!.GetTimeProvider(1).CreateTimer(_ => fired++, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            for (int i = 0; i < Ops; i++)
            {
                timer.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan);
                await Yield(); // level 0: the level-1 firing runs first
            }

            if (fired != Ops)
            {
                throw new InvalidOperationException($"fired {fired} of {Ops}");
            }
        },
        new PriorityContextOptions { Levels = 2, DefaultLevel = 0 });

    [Benchmark(OperationsPerInvoke = Ops, Description = "Loop timer: arm (1 h) + cancel (Change to infinite)")]
    public void LoopTimer_ArmCancel() => PriorityContext.Run(
        static () =>
        {
            using ITimer timer = PriorityContext.Current!.TimeProvider.CreateTimer(s_noop, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            for (int i = 0; i < Ops; i++)
            {
                timer.Change(TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
                timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            }

            return Task.CompletedTask;
        });

    [Benchmark(OperationsPerInvoke = Ops, Description = "System.Threading.Timer: arm (1 h) + cancel (Change to infinite)")]
    public void SystemTimer_ArmCancel()
    {
        using var timer = new Timer(s_noop, null, Timeout.Infinite, Timeout.Infinite);
        for (int i = 0; i < Ops; i++)
        {
            timer.Change(TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
            timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
    }

    [Benchmark(OperationsPerInvoke = Ops, Description = "Loop timer: CreateTimer (1 h) + Dispose")]
    public void LoopTimer_CreateDispose() => PriorityContext.Run(
        static () =>
        {
            TimeProvider provider = PriorityContext.Current!.TimeProvider;
            for (int i = 0; i < Ops; i++)
            {
                provider.CreateTimer(s_noop, null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan).Dispose();
            }

            return Task.CompletedTask;
        });

    [Benchmark(OperationsPerInvoke = Ops, Description = "TimeProvider.System: CreateTimer (1 h) + Dispose")]
    public void SystemProvider_CreateDispose()
    {
        for (int i = 0; i < Ops; i++)
        {
            TimeProvider.System.CreateTimer(s_noop, null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan).Dispose();
        }
    }

    [Benchmark(OperationsPerInvoke = Ops, Description = "Priority.Delay(1 h, token) + cancel, on the loop")]
    public void PriorityDelay_ArmCancel() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                using var cts = new CancellationTokenSource();
                ValueTask delay = Delay(TimeSpan.FromHours(1), cts.Token);
                cts.Cancel();
                try
                {
                    await delay;
                }
                catch (OperationCanceledException)
                {
                }
            }
        });

    [Benchmark(OperationsPerInvoke = Ops, Description = "Task.Delay(1 h, token) + cancel, on the pool")]
    public async Task TaskDelay_ArmCancel_Pool()
    {
        for (int i = 0; i < Ops; i++)
        {
            using var cts = new CancellationTokenSource();
            Task delay = Task.Delay(TimeSpan.FromHours(1), cts.Token);
            cts.Cancel();
            try
            {
                await delay.ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
            }
        }
    }

    [Benchmark(OperationsPerInvoke = Waits, Description = "await Priority.Delay(1 ms) on the loop (wait, not CPU)")]
    public void PriorityDelay_1ms() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Waits; i++)
            {
                await Delay(TimeSpan.FromMilliseconds(1));
            }
        });

    [Benchmark(OperationsPerInvoke = Waits, Description = "await Task.Delay(1 ms) on the pool (wait, not CPU)")]
    public async Task TaskDelay_1ms_Pool()
    {
        for (int i = 0; i < Waits; i++)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(1)).ConfigureAwait(false);
        }
    }

    [GlobalSetup]
    public void Setup()
    {
        _plain = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench plain" });
        _withTimer = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench timer" });
        _periodic = _withTimer.Context.TimeProvider.CreateTimer(s_noop, null, TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1));
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _periodic?.Dispose();
        _plain?.Dispose();
        _withTimer?.Dispose();
    }

    [Benchmark(OperationsPerInvoke = PostDrainBenchmarks.Items, Description = "Post+drain from the loop thread, no timer armed")]
    public void PostDrain_NoTimer() => RunBatchOn(_plain!.Context.GetSynchronizationContext(0));

    [Benchmark(OperationsPerInvoke = PostDrainBenchmarks.Items, Description = "Post+drain from the loop thread, a 1 ms periodic loop timer firing")]
    public void PostDrain_PeriodicTimerFiring() => RunBatchOn(_withTimer!.Context.GetSynchronizationContext(0));

    private void RunBatchOn(SynchronizationContext context)
    {
        _done.Reset();
        context.Post(s_postBatch, this);
        if (!_done.Wait(TimeSpan.FromSeconds(60)))
        {
            throw new TimeoutException("The loop did not run the batch within 60 s; it has stopped.");
        }
    }
}
