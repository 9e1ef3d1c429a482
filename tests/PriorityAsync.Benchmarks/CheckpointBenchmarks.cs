using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using static PriorityAsync.Priority;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Checkpoints inside a single-threaded context, where nothing else is queued (so none yields): <c>await Checkpoint()</c>, the
/// non-awaiting <c>ShouldYield</c>, <c>await Prioritize(sameLevel)</c> and <c>await Task.Yield()</c> (which always queues); and, for
/// scale, an <c>await</c> on a struct awaiter whose <c>IsCompleted</c> reads one volatile flag (the floor of any awaited checkpoint).
/// </summary>
/// <remarks>
/// Each invocation runs <see cref="Ops"/> operations inside a fresh <c>PriorityContext.Run</c> (3 levels, the default time slice); the
/// cost of creating the context is amortized over them.
/// </remarks>
[BenchmarkCategory("Checkpoint")]
public class CheckpointBenchmarks
{
    public const int Ops = 100_000;

    private static int s_flag;

    private static PriorityContextOptions Options => new() { Levels = 3 };

    [GlobalSetup]
    public void Setup() => Volatile.Write(ref s_flag, 0); // never raised: the flag awaiter always completes at once

    [Benchmark(OperationsPerInvoke = Ops, Description = "await Checkpoint() (does not yield)")]
    public void Checkpoint_NotYielding() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Checkpoint();
            }
        },
        Options);

    [Benchmark(OperationsPerInvoke = Ops, Description = "ShouldYield (false)")]
    public int ShouldYield_False()
    {
        int yields = 0;
        PriorityContext.Run(
            () =>
            {
                for (int i = 0; i < Ops; i++)
                {
                    if (ShouldYield)
                    {
                        yields++;
                    }
                }
            },
            Options);
        return yields;
    }

    [Benchmark(OperationsPerInvoke = Ops, Description = "await Prioritize(sameLevel) (inline)")]
    public void Prioritize_SameLevel() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Prioritize(0);
            }
        },
        Options);

    [Benchmark(OperationsPerInvoke = Ops, Description = "await Task.Yield() on PriorityContext")]
    public void TaskYield() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Task.Yield();
            }
        },
        Options);

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops, Description = "await on a struct awaiter reading one volatile flag")]
    public void FlagAwaiter() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await new FlagAwaitable();
            }
        },
        Options);

    /// <summary>Completes at once while <see cref="s_flag"/> is 0 (always, here): the floor of a checkpoint that reads a flag.</summary>
    private readonly struct FlagAwaitable : ICriticalNotifyCompletion
    {
        public FlagAwaitable GetAwaiter() => this;

        public bool IsCompleted => Volatile.Read(ref s_flag) == 0;

        public void GetResult()
        {
        }

        public void OnCompleted(System.Action continuation) => continuation();

        public void UnsafeOnCompleted(System.Action continuation) => continuation();
    }
}
