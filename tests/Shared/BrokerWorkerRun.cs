using System.Globalization;
using System.IO;
using BrokerWorker;
using BrokerWorker.Bus;
using BrokerWorker.Processes;
using MessageBus;

namespace TestSupport;

/// <summary>
/// A real broker's queue of the BrokerWorker sample, filled with messages, and N of the sample's worker processes started on it
/// together: what every broker's BrokerWorkerProcessTests run their faults on (tests/MessageBus.*.Tests).
/// </summary>
/// <typeparam name="TQueue">The broker's queue, through which the test reads the counts (every process's counts are the broker's).</typeparam>
internal sealed class BrokerWorkerRun<TQueue> : IAsyncDisposable
    where TQueue : ILeaseQueue, IAsyncDisposable
{
    private readonly Func<TQueue, Task> _drop;
    private readonly int _messages;
    private readonly TimeSpan _patience;

    private BrokerWorkerRun(TQueue queue, Func<TQueue, Task> drop, int messages, List<WorkerChild> children, TimeSpan patience)
    {
        Queue = queue;
        _drop = drop;
        _messages = messages;
        Children = children;
        _patience = patience;
    }

    public TQueue Queue { get; }

    public List<WorkerChild> Children { get; }

    /// <summary>
    /// Parses <paramref name="args"/> as the sample does, creates the mode's queue as its coordinator names it (<paramref name="create"/>,
    /// from a fresh prefix), fills it (<paramref name="enqueue"/>), starts the workers on <paramref name="connection"/> and lets them go
    /// together once each is ready. Every wait is bounded by <paramref name="patience"/>. The last <paramref name="withheld"/> messages
    /// are not enqueued (the test enqueues them itself): the workers wait for them, connected, however long a fault takes to inject.
    /// </summary>
    public static async Task<BrokerWorkerRun<TQueue>> StartAsync(
        string bus, string connection, TimeSpan patience, int messages, string mode, int workers, string[] args,
        Func<string, Task<TQueue>> create, Func<TQueue, IReadOnlyList<string>, Task> enqueue, Func<TQueue, Task> drop, int withheld = 0)
    {
        CommandLine.TryParse(
            [.. args, "--bus", bus, "--workers", workers.ToString(CultureInfo.InvariantCulture), "--messages", messages.ToString(CultureInfo.InvariantCulture)],
            out Options parsed, out string? error).Should().BeTrue(error);
        Options options = parsed with { Queue = "t_" + Guid.NewGuid().ToString("N")[..16] };
        TQueue queue = await create(BusFactory.Table(options, mode));
        await enqueue(queue, [.. Enumerable.Range(0, messages - withheld).Select(i => $"message {i}")]);
        var children = new List<WorkerChild>();
        for (int i = 0; i < workers; i++)
        {
            children.Add(WorkerChild.Start(Coordinator.WorkerOptions(options, mode), connection));
        }

        foreach (WorkerChild child in children)
        {
            (await child.WaitReadyAsync(patience)).Should().BeTrue(child.Describe());
        }

        foreach (WorkerChild child in children)
        {
            child.Go();
        }

        return new BrokerWorkerRun<TQueue>(queue, drop, messages, children, patience);
    }

    public Task<BusCounts> CountsAsync() => Queue.GetCountsAsync();

    public async Task WaitUntilAsync(Func<Task<bool>> condition, string what)
    {
        using CancellationTokenSource timeout = new(_patience);
        while (!await condition())
        {
            // Every worker gone is a failure only if the condition is still false after they went: the last completion and the
            // workers' exit may both fall between the check above and this one.
            if (Children.TrueForAll(c => c.HasExited) && !await condition())
            {
                Children.Should().Contain(c => !c.HasExited, $"a worker must still run while waiting for {what}");
            }

            await Task.Delay(10, timeout.Token);
        }
    }

    public async Task<BusCounts> WaitForAllCompletedAsync()
    {
        await WaitUntilAsync(async () => (await CountsAsync()).Completed >= _messages, "every message to be completed");
        return await CountsAsync();
    }

    /// <summary>Waits for the live workers to exit (they stop by themselves once the queue is done) and returns their reports.</summary>
    public async Task<IReadOnlyList<ProcessStats>> StopAsync()
    {
        var stats = new List<ProcessStats>();
        foreach (WorkerChild child in Children)
        {
            await child.WaitForExitAsync(_patience);
            if (child.Stats is { } s)
            {
                stats.Add(s);
            }
        }

        return stats;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (WorkerChild child in Children)
        {
            child.Dispose();
        }

        await _drop(Queue);
        await Queue.DisposeAsync();
    }
}

/// <summary>The BrokerWorker sample's entry point, in-process, for the tests of its bad input.</summary>
internal static class BrokerWorkerApp
{
    /// <summary>Runs the sample; returns its exit code and what it wrote to stderr, which must be exactly one line (no stack trace).</summary>
    public static async Task<(int Exit, string Line)> RunAsync(TimeSpan patience, params string[] args)
    {
        var stdout = new StringWriter();
        var stderr = new StringWriter();

        int exit = await App.RunAsync(args, stdout, stderr).WaitAsync(patience);

        string text = stderr.ToString().TrimEnd();
        text.Split('\n').Should().ContainSingle("a failure is one line, never a stack trace: {0}", text);
        return (exit, text);
    }
}
