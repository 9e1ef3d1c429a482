using System;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Nito.AsyncEx;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// The TaskScheduler adapter: <c>await factory.StartNew(work)</c> in a loop, with the awaiting method running on the scheduler's own
/// home (inside the context, or on the pool / the exclusive scheduler), so both the task and the continuation go through it.
/// Baselines: <see cref="TaskScheduler.Default"/>, <see cref="ConcurrentExclusiveSchedulerPair.ExclusiveScheduler"/> and the
/// AsyncContext (Nito.AsyncEx.Context 5.1.2)'s scheduler.
/// </summary>
/// <remarks>Every variant allocates the Task that StartNew creates (a runtime cost no scheduler can avoid).</remarks>
[BenchmarkCategory("TaskScheduler")]
public class SchedulerBenchmarks
{
    public const int Ops = 5_000;

    private static readonly Action s_work = static () => { };

    [Benchmark(OperationsPerInvoke = Ops, Description = "PriorityAsync: GetTaskFactory(1).StartNew + await")]
    public void PriorityAsync_StartNew() => PriorityContext.Run(
        static async () =>
        {
            TaskFactory factory = PriorityContext.Current!.GetTaskFactory(1);
            for (int i = 0; i < Ops; i++)
            {
                await factory.StartNew(s_work);
            }
        },
        new PriorityContextOptions { Levels = 3, DefaultLevel = 1 });

    [Benchmark(Baseline = true, OperationsPerInvoke = Ops, Description = "TaskScheduler.Default: StartNew + await (pool)")]
    public void Default_StartNew() => Task.Run(
        static async () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                await Task.Factory.StartNew(s_work, CancellationToken.None, TaskCreationOptions.None, TaskScheduler.Default);
            }
        }).GetAwaiter().GetResult();

    [Benchmark(OperationsPerInvoke = Ops, Description = "ConcurrentExclusiveSchedulerPair exclusive: StartNew + await")]
    public void Exclusive_StartNew()
    {
        TaskScheduler exclusive = new ConcurrentExclusiveSchedulerPair().ExclusiveScheduler;
        Task.Factory.StartNew(
            () => ExclusiveLoop(exclusive),
            CancellationToken.None,
            TaskCreationOptions.None,
            exclusive).Unwrap().GetAwaiter().GetResult();
    }

    [Benchmark(OperationsPerInvoke = Ops, Description = "AsyncContext scheduler: StartNew + await")]
    public void AsyncContext_StartNew() => AsyncContext.Run(
        static async () =>
        {
            TaskFactory factory = AsyncContext.Current!.Factory;
            for (int i = 0; i < Ops; i++)
            {
                await factory.StartNew(s_work);
            }
        });

    // Runs as a task on the exclusive scheduler, so TaskScheduler.Current is that scheduler and every await comes back to it.
    private static async Task ExclusiveLoop(TaskScheduler exclusive)
    {
        for (int i = 0; i < Ops; i++)
        {
            await Task.Factory.StartNew(s_work, CancellationToken.None, TaskCreationOptions.None, exclusive);
        }
    }
}
