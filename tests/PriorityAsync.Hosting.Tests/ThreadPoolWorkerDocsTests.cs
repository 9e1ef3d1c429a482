using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

// begin-snippet: hosting-pool-worker
// Needs: the PriorityAsync.Hosting package (using PriorityAsync; using PriorityAsync.Hosting;) and your ReindexJob.
/// <summary>Re-indexes in batches on every core at level 0; its progress report, at level 2, never waits behind queued batches.</summary>
public sealed class ReindexWorker(ReindexJob job) : PriorityThreadPoolBackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        // Bulk CPU work at level 0, one item per batch: the pool runs them on all its threads at once (the code must be thread-safe).
        Task[] batches = [.. job.Batches.Select(batch => Pool.InvokeAsync(() => job.IndexAsync(batch, stoppingToken), level: 0))];

        // Urgent work at level 2 starts on the first thread that is free, ahead of every batch still queued.
        await Pool.InvokeAsync(() => job.ReportProgressAsync(stoppingToken), level: 2);
        await Task.WhenAll(batches);
    }
}
// end-snippet

/// <summary>The job behind <see cref="ReindexWorker"/>: each batch blocks its thread until the test opens the gate.</summary>
public sealed class ReindexJob
{
    private readonly ManualResetEventSlim _gate = new(false);
    private int _started;

    public IReadOnlyList<int> Batches { get; } = [.. Enumerable.Range(0, 20)];

    public int Started => Volatile.Read(ref _started);

    public TaskCompletionSource<int> ProgressRan { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void Open() => _gate.Set();

    public Task IndexAsync(int batch, CancellationToken token)
    {
        Interlocked.Increment(ref _started);
        if (!_gate.Wait(Infrastructure.TaskExtensions.Timeout, token))
        {
            throw new TimeoutException($"Batch {batch}: the test never opened the gate.");
        }

        return Task.CompletedTask;
    }

    public Task ReportProgressAsync(CancellationToken token)
    {
        ProgressRan.TrySetResult(Started);
        return Task.CompletedTask;
    }
}

public sealed class ThreadPoolWorkerDocsTests
{
    [Fact]
    public async Task ReindexWorker_TwoThreadsHeldByBatches_TheProgressReportRunsBeforeTheQueuedBatches()
    {
        var job = new ReindexJob();
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Services.AddSingleton(job);
        // begin-snippet: hosting-pool-program
        // Needs: a host builder (var builder = Host.CreateApplicationBuilder(args);) and the ReindexWorker above.
        builder.Services.AddPriorityThreadPoolWorker<ReindexWorker>(o => o.ThreadCount = 2); // default: one thread per core
        // end-snippet
        using IHost host = builder.Build();

        await host.StartAsync().Within("host start");
        while (job.Started < 2 && !job.ProgressRan.Task.IsCompleted)
        {
            await Task.Delay(5); // both threads held by batches, or the report already ran on the free one
        }

        job.Open();
        int startedBeforeReport = await job.ProgressRan.Task.Within("the progress report");
        ReindexWorker worker = host.Services.GetServices<IHostedService>().OfType<ReindexWorker>().Single();
        await worker.ExecuteTask!.Within("every batch, then the pool, to finish"); // before the stop, whose token would cancel queued batches
        await host.StopAsync().Within("host stop");

        startedBeforeReport.Should().BeLessThanOrEqualTo(2, "at most the batches already holding the 2 threads: a free thread takes the most urgent item first");
        job.Started.Should().Be(20);
        worker.ExecuteTask!.Status.Should().Be(TaskStatus.RanToCompletion);
    }
}
