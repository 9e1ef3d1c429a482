using System;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Nito.AsyncEx;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Uncontended acquire + release of the priority-inheriting lock (issue 38) against the locks a user would otherwise pick, side by side
/// in one run: <see cref="PriorityLock"/> off every scheduler, on a loop in plain level code and on a loop inside a flow
/// (<c>InvokeAsync</c> work, where taking it attaches its region to the flow: work its caller awaits, as usual, and work nobody
/// awaits); <see cref="PrioritySemaphore"/>'s
/// <c>WaitAsync</c> + <c>Release</c>; <see cref="SemaphoreSlim"/>'s (the baseline), bare and with the release in a <c>finally</c> as it is
/// meant to be used (a lock's <c>using</c> is a try/finally too); Nito.AsyncEx's <see cref="AsyncLock"/>
/// (<c>LockAsync</c> + <c>Dispose</c>, Nito.AsyncEx.Coordination 5.1.2).
/// </summary>
/// <remarks>
/// Each invocation runs <see cref="Ops"/> acquire + release pairs in one async method, every <c>await</c> completing at once. The rows
/// "off every scheduler" run on the benchmark's thread; the rows "on a loop" run on a long-lived <see cref="PriorityContextThread"/>
/// (<see cref="LoopBatch"/>), whose hand-off per invocation (a wake-up of the loop, shared by <see cref="Ops"/> pairs) the loop rows pay
/// alone: compare a loop row with <c>SemaphoreSlim</c> on the same loop, which pays the same.
/// </remarks>
[BenchmarkCategory("Locks")]
public class LockBenchmarks
{
    public const int Ops = 16_384;

    private readonly PriorityLock _priorityLock = new() { Name = "bench" };
    private readonly PrioritySemaphore _prioritySemaphore = new(1, 1);
    private readonly SemaphoreSlim _semaphore = new(1, 1);
    private readonly AsyncLock _asyncLock = new();

    private LoopBatch? _loop;

    // One loop per benchmark that needs one: BenchmarkDotNet runs each benchmark on a fresh instance.
    [GlobalSetup(Target = nameof(PriorityLock_OnLoop_Plain))]
    public void SetupLockPlain() => _loop = new LoopBatch("bench-lock", LoopCode.Plain, PriorityLockPairsAsync);

    [GlobalSetup(Target = nameof(PriorityLock_OnLoop_InFlow))]
    public void SetupLockInFlow() => _loop = new LoopBatch("bench-lock", LoopCode.InvokeAsync, PriorityLockPairsAsync);

    [GlobalSetup(Target = nameof(PriorityLock_OnLoop_InFlowNotAwaited))]
    public void SetupLockInFlowNotAwaited() => _loop = new LoopBatch("bench-lock", LoopCode.InvokeAsyncNotAwaited, PriorityLockPairsAsync);

    [GlobalSetup(Target = nameof(PrioritySemaphore_OnLoop_Plain))]
    public void SetupPrioritySemaphorePlain() => _loop = new LoopBatch("bench-lock", LoopCode.Plain, PrioritySemaphorePairsAsync);

    [GlobalSetup(Target = nameof(SemaphoreSlim_OnLoop_Plain))]
    public void SetupSemaphoreSlimPlain() => _loop = new LoopBatch("bench-lock", LoopCode.Plain, SemaphoreSlimPairsAsync);

    [GlobalSetup(Target = nameof(SemaphoreSlimFinally_OnLoop_Plain))]
    public void SetupSemaphoreSlimFinallyPlain() => _loop = new LoopBatch("bench-lock", LoopCode.Plain, SemaphoreSlimFinallyPairsAsync);

    [GlobalCleanup]
    public void Cleanup() => _loop?.Dispose();

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityLock: LockAsync+Dispose, off every scheduler")]
    public void PriorityLock_OffScheduler() => PriorityLockPairsAsync().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityLock: LockAsync+Dispose, on a loop, plain level code")]
    public void PriorityLock_OnLoop_Plain() => _loop!.Run();

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityLock: LockAsync+Dispose, on a loop, in a flow (await InvokeAsync work)")]
    public void PriorityLock_OnLoop_InFlow() => _loop!.Run();

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityLock: LockAsync+Dispose, on a loop, in a flow nobody awaits")]
    public void PriorityLock_OnLoop_InFlowNotAwaited() => _loop!.Run();

    [Benchmark(OperationsPerInvoke = Ops, Description = "PrioritySemaphore: WaitAsync+Release, off every scheduler")]
    public void PrioritySemaphore_OffScheduler() => PrioritySemaphorePairsAsync().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Ops, Description = "PrioritySemaphore: WaitAsync+Release, on a loop, plain level code")]
    public void PrioritySemaphore_OnLoop_Plain() => _loop!.Run();

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops, Description = "SemaphoreSlim: WaitAsync+Release, off every scheduler")]
    public void SemaphoreSlim_OffScheduler() => SemaphoreSlimPairsAsync().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Ops, Description = "SemaphoreSlim: WaitAsync+Release, on a loop, plain level code")]
    public void SemaphoreSlim_OnLoop_Plain() => _loop!.Run();

    [Benchmark(OperationsPerInvoke = Ops, Description = "SemaphoreSlim: WaitAsync+Release in a finally, off every scheduler")]
    public void SemaphoreSlimFinally_OffScheduler() => SemaphoreSlimFinallyPairsAsync().GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Ops, Description = "SemaphoreSlim: WaitAsync+Release in a finally, on a loop, plain level code")]
    public void SemaphoreSlimFinally_OnLoop_Plain() => _loop!.Run();

    [Benchmark(OperationsPerInvoke = Ops, Description = "AsyncEx AsyncLock: LockAsync+Dispose, off every scheduler")]
    public void AsyncLock_OffScheduler() => AsyncLockPairsAsync().GetAwaiter().GetResult();

    private async Task PriorityLockPairsAsync()
    {
        for (int i = 0; i < Ops; i++)
        {
            using (await _priorityLock.LockAsync())
            {
            }
        }
    }

    private async Task PrioritySemaphorePairsAsync()
    {
        for (int i = 0; i < Ops; i++)
        {
            await _prioritySemaphore.WaitAsync();
            _prioritySemaphore.Release();
        }
    }

    private async Task SemaphoreSlimPairsAsync()
    {
        for (int i = 0; i < Ops; i++)
        {
            await _semaphore.WaitAsync();
            _semaphore.Release();
        }
    }

    private async Task SemaphoreSlimFinallyPairsAsync()
    {
        for (int i = 0; i < Ops; i++)
        {
            await _semaphore.WaitAsync(); // as SemaphoreSlim is meant to be used: the using of a lock is a try/finally too
            try
            {
            }
            finally
            {
                _semaphore.Release();
            }
        }
    }

    private async Task AsyncLockPairsAsync()
    {
        for (int i = 0; i < Ops; i++)
        {
            using (await _asyncLock.LockAsync())
            {
            }
        }
    }
}
