using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace Results;

/// <summary>
/// The remote calls: one <see cref="TaskCompletionSource{TResult}"/> per call, completed batch by batch by a dedicated thread that
/// plays the network, one batch every <c>window / batches</c> after <see cref="Start"/>.
/// </summary>
/// <remarks>
/// Completions run their continuations asynchronously, as real I/O does: a continuation without a context goes to the thread pool,
/// one that captured a <see cref="SynchronizationContext"/> is posted to it. How a batch is delivered is the variant's choice
/// (<see cref="Start"/>): the thread-pool variants complete it on the network thread; PriorityAsync has its loop complete it, as an
/// event loop completes the futures its I/O poll found ready.
/// </remarks>
internal sealed class SimulatedNetwork
{
    private readonly Workload _workload;
    private readonly TimeSpan _window;
    private readonly TaskCompletionSource<int>[] _sources;
    private Thread? _thread;

    public SimulatedNetwork(Workload workload, TimeSpan window)
    {
        _workload = workload;
        _window = window;
        _sources = new TaskCompletionSource<int>[workload.Count];
        for (int i = 0; i < _sources.Length; i++)
        {
            _sources[i] = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    public Workload Workload => _workload;

    /// <summary>Gets the response of call <paramref name="index"/>: its result is the call's index.</summary>
    public Task<int> Call(int index) => _sources[index].Task;

    /// <summary>Starts the clock: batch b becomes ready <c>(b + 1) * window / batches</c> from now, and is handed to
    /// <paramref name="deliver"/> on the network thread, which must make sure <see cref="CompleteBatch"/> runs.</summary>
    public void Start(Action<int> deliver)
    {
        if (_thread is not null)
        {
            throw new InvalidOperationException("The network was already started.");
        }

        _thread = new Thread(() => Drive(deliver)) { IsBackground = true, Name = "Simulated network" };
        _thread.Start();
    }

    /// <summary>Completes every call of batch <paramref name="batch"/>, in index order.</summary>
    public void CompleteBatch(int batch)
    {
        foreach (int call in _workload.Batches[batch])
        {
            _sources[call].SetResult(call);
        }
    }

    /// <summary>Waits for the network thread to have delivered every batch.</summary>
    public void Join() => _thread?.Join();

    private void Drive(Action<int> deliver)
    {
        long start = Stopwatch.GetTimestamp();
        int batches = _workload.BatchCount;
        for (int b = 0; b < batches; b++)
        {
            TimeSpan due = _window * (b + 1) / batches;
            TimeSpan left = due - Stopwatch.GetElapsedTime(start);
            if (left > TimeSpan.Zero)
            {
                Thread.Sleep(left);
            }

            deliver(b);
        }
    }
}
