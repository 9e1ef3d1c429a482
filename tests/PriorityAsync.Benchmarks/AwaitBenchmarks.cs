using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Nito.AsyncEx;
using static PriorityAsync.Priority;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Same-thread awaits inside a single-threaded context: <c>await Prioritize(level)</c> switching between two levels (completes
/// synchronously when nothing more urgent is queued), the forced-queue cases (<c>Yield</c>, and a switch down while a more urgent
/// item is pending), and <c>await Task.Yield()</c> on our context, on the thread pool and on the AsyncContext (Nito.AsyncEx.Context 5.1.2).
/// </summary>
/// <remarks>
/// Each invocation runs <see cref="Ops"/> awaits inside a fresh context (<c>PriorityContext.Run</c> / <c>AsyncContext.Run</c>
/// / <c>Task.Run</c>); the cost of creating the context is included and amortized over the awaits (about 0.1 ns and 0.1 B per op).
/// </remarks>
[BenchmarkCategory("Await")]
public class AwaitBenchmarks
{
    public const int Ops = 20_000;

    private static readonly SendOrPostCallback s_noop = static _ => { };

    private static PriorityContextOptions Options => new() { Levels = 3 };

    [Benchmark(OperationsPerInvoke = 2 * Ops, Description = "PriorityAsync: await Prioritize(1)/(0) switch (inline)")]
    public void PriorityAsync_PrioritizeSwitch() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Prioritize(1);
                await Prioritize(0);
            }
        },
        Options);

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityAsync: await Yield() (queued)")]
    public void PriorityAsync_Yield() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Yield();
            }
        },
        Options);

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityAsync: Prioritize down, higher item pending (queued)")]
    public void PriorityAsync_PrioritizeDownWithHigherPending() => PriorityContext.Run(
        static async () =>
        {
            await Prioritize(1);
            PriorityContext context = PriorityContext.Current!;
            SynchronizationContext level1 = context.GetSynchronizationContext(1);
            for (int i = 0; i < Ops; i++)
            {
                level1.Post(s_noop, null);  // more urgent than level 0: the switch down must queue behind it
                await Prioritize(0);        // queued at level 0; the loop runs the level-1 item first
                await Prioritize(1);        // nothing pending above 1: inline
            }
        },
        Options);

    [Benchmark(OperationsPerInvoke = Ops, Description = "Task.Yield() on PriorityContext")]
    public void TaskYield_OnPriorityContext() => PriorityContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Task.Yield();
            }
        },
        Options);

    [Benchmark(OperationsPerInvoke = Ops, Description = "Task.Yield() on the thread pool")]
    public void TaskYield_OnThreadPool() => Task.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Task.Yield();
            }
        }).GetAwaiter().GetResult();

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops, Description = "Task.Yield() on AsyncContext")]
    public void TaskYield_OnAsyncContext() => AsyncContext.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Task.Yield();
            }
        });
}
