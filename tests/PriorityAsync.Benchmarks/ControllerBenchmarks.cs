using System;
using System.Threading;
using BenchmarkDotNet.Attributes;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// What a <see cref="PriorityTaskController"/> costs per item: post + drain of <see cref="Items"/> callbacks from the loop thread under a
/// controller, against the same batch posted at the controller's level directly (the plain path, measured in the same run, which is what
/// <see cref="PostDrainBenchmarks"/> measures too). And the cost of moving a queued batch with <see cref="PriorityTaskController.SetLevel"/>.
/// </summary>
/// <remarks>
/// Per item the controller adds a lock round trip on post, one on run, and one more loop item (its activation, queued in the
/// context's FIFO of its level): so roughly twice the plain cost is the expected order of magnitude.
/// </remarks>
[BenchmarkCategory("Controller")]
public class ControllerBenchmarks
{
    public const int Items = 16_384;

    private static readonly SendOrPostCallback s_count = static state => ((ControllerBenchmarks)state!)._ran++;

    private static readonly SendOrPostCallback s_done = static state => ((ControllerBenchmarks)state!)._done.Set();

    // Posts the batch to the context current while it runs: the level's own context, or the controller's.
    private static readonly SendOrPostCallback s_postBatch = static state =>
    {
        var self = (ControllerBenchmarks)state!;
        SynchronizationContext target = SynchronizationContext.Current!;
        for (int i = 0; i < Items; i++)
        {
            target.Post(s_count, self);
        }

        target.Post(s_done, self); // FIFO: runs after the batch
    };

    // Posts the batch under the controller at level 0, moves it to level 1 (one SetLevel per batch), and lets it run there.
    private static readonly SendOrPostCallback s_postBatchThenMove = static state =>
    {
        var self = (ControllerBenchmarks)state!;
        PriorityTaskController controller = self._controller!;
        controller.SetLevel(0);
        for (int i = 0; i < Items; i++)
        {
            controller.Post(s_count, self);
        }

        controller.Post(s_done, self);
        controller.SetLevel(1);
    };

    private readonly ManualResetEventSlim _done = new(false);
    private PriorityContextThread? _thread;
    private PriorityTaskController? _controller;
    private long _ran;

    [GlobalSetup]
    public void Setup()
    {
        _thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench-controller" });
        _controller = _thread.Context.CreateController(0);
    }

    [GlobalCleanup]
    public void Cleanup() => _thread?.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Items, Description = "Plain: Post+drain from the loop thread")]
    public void Plain_PostDrain() => RunBatch(_thread!.Context.GetSynchronizationContext(0), s_postBatch);

    [Benchmark(OperationsPerInvoke = Items, Description = "Controller: Post+drain from the loop thread")]
    public void Controller_PostDrain()
    {
        _controller!.SetLevel(0);
        RunBatch(_controller.SynchronizationContext, s_postBatch);
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "Controller: Post, SetLevel of the whole batch, drain")]
    public void Controller_PostMoveDrain() => RunBatch(_thread!.Context.GetSynchronizationContext(2), s_postBatchThenMove);

    private void RunBatch(SynchronizationContext context, SendOrPostCallback batch)
    {
        _done.Reset();
        context.Post(batch, this);
        if (!_done.Wait(TimeSpan.FromSeconds(60)))
        {
            throw new TimeoutException("The loop did not run the batch within 60 s; it has stopped.");
        }
    }
}
