using System;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// What running in a flow costs (issue 38): <c>InvokeAsync</c> work and a scope's children run in a flow of their own, whose items wait
/// in its FIFO while the level queue holds one place per item ([X-FLOW] in docs/design.md), so that a wait on the work can raise it. The
/// same loops in plain level code (a posted callback, as a <c>Run</c> entry runs) and in a flow: <c>await Priority.Yield()</c>, and a
/// batch of plain posts run by the loop. And what one <c>InvokeAsync</c> call costs, its work run included.
/// </summary>
/// <remarks>
/// Every row runs on a long-lived <see cref="PriorityContextThread"/> (<see cref="LoopBatch"/>): a flow is started once and runs one batch
/// per invocation, so the figures are the steady state (a flow's FIFO has grown to the batch already); the hand-off per invocation (a
/// wake-up of the loop, shared by the batch's items) is paid by every row alike.
/// </remarks>
public class FlowBenchmarks
{
    public const int Yields = 20_000;
    public const int Posts = 16_384;
    public const int Invokes = 4_096;

    private static readonly SendOrPostCallback s_count = static state => ((FlowBenchmarks)state!)._ran++;
    private static readonly Func<Task> s_work = static () => Task.CompletedTask;

    private LoopBatch? _loop;
    private long _ran;

    // One loop per benchmark: BenchmarkDotNet runs each benchmark on a fresh instance.
    [GlobalSetup(Target = nameof(Yield_Plain))]
    public void SetupYieldPlain() => _loop = new LoopBatch("bench-flow", LoopCode.Plain, YieldsAsync);

    [GlobalSetup(Target = nameof(Yield_InInvokeAsync))]
    public void SetupYieldInInvokeAsync() => _loop = new LoopBatch("bench-flow", LoopCode.InvokeAsync, YieldsAsync);

    [GlobalSetup(Target = nameof(Yield_InScopeChild))]
    public void SetupYieldInScopeChild() => _loop = new LoopBatch("bench-flow", LoopCode.ScopeChild, YieldsAsync);

    [GlobalSetup(Target = nameof(PostRun_Plain))]
    public void SetupPostRunPlain() => _loop = new LoopBatch("bench-flow", LoopCode.Plain, PostsAsync);

    [GlobalSetup(Target = nameof(PostRun_InInvokeAsync))]
    public void SetupPostRunInInvokeAsync() => _loop = new LoopBatch("bench-flow", LoopCode.InvokeAsync, PostsAsync);

    [GlobalSetup(Target = nameof(InvokeAsync_PerCall))]
    public void SetupInvoke() => _loop = new LoopBatch("bench-flow", LoopCode.Plain, InvokesAsync);

    [GlobalCleanup]
    public void Cleanup() => _loop?.Dispose();

    [BenchmarkCategory("Flow Yield")]
    [Benchmark(Baseline = true, OperationsPerInvoke = Yields, Description = "await Yield(), plain level code")]
    public void Yield_Plain() => _loop!.Run();

    [BenchmarkCategory("Flow Yield")]
    [Benchmark(OperationsPerInvoke = Yields, Description = "await Yield(), in a flow (await InvokeAsync work)")]
    public void Yield_InInvokeAsync() => _loop!.Run();

    [BenchmarkCategory("Flow Yield")]
    [Benchmark(OperationsPerInvoke = Yields, Description = "await Yield(), in a flow (a scope's child)")]
    public void Yield_InScopeChild() => _loop!.Run();

    [BenchmarkCategory("Flow Post")]
    [Benchmark(Baseline = true, OperationsPerInvoke = Posts, Description = "Post+run from the loop thread, plain level code")]
    public void PostRun_Plain() => _loop!.Run();

    [BenchmarkCategory("Flow Post")]
    [Benchmark(OperationsPerInvoke = Posts, Description = "Post+run from the loop thread, in a flow (await InvokeAsync work)")]
    public void PostRun_InInvokeAsync() => _loop!.Run();

    [BenchmarkCategory("Flow InvokeAsync")]
    [Benchmark(OperationsPerInvoke = Invokes, Description = "InvokeAsync(work, 0) and its run, per call (plain level code)")]
    public void InvokeAsync_PerCall() => _loop!.Run();

    private static async Task YieldsAsync()
    {
        for (int i = 0; i < Yields; i++)
        {
            await Priority.Yield();
        }
    }

    /// <summary>Posts to the context the code runs in (the level's own, or the flow's), then waits behind the batch.</summary>
    private async Task PostsAsync()
    {
        SynchronizationContext target = SynchronizationContext.Current!;
        for (int i = 0; i < Posts; i++)
        {
            target.Post(s_count, this);
        }

        await Priority.Yield(); // FIFO within the level (and within the flow): runs after the batch
    }

    /// <summary>Starts <see cref="Invokes"/> calls of empty work at level 0, then waits behind them: each has run and completed.</summary>
    private static async Task InvokesAsync()
    {
        PriorityScheduler scheduler = Priority.CurrentScheduler!;
        for (int i = 0; i < Invokes; i++)
        {
            _ = scheduler.InvokeAsync(s_work, 0);
        }

        await Priority.Yield();
    }
}
