using System;
using System.Threading;

namespace BrokerWorker.Processing;

/// <summary>What one worker saw (the broker's counts are the authority; these explain them). Thread-safe.</summary>
public sealed class WorkerStats
{
    private long _stoppedLeaseLost;
    private long _stoppedNoProgress;
    private long _rejectedByBroker;
    private long _connectionErrors;
    private long _worstRenewGapTicks;
    private int _peakThreads;
    private long _completed;

    /// <summary>Messages whose work stopped because a renewal was refused (the lease's token was cancelled).</summary>
    public long StoppedLeaseLost => Interlocked.Read(ref _stoppedLeaseLost);

    /// <summary>Priority mode: messages whose renewal stopped because processing made no progress.</summary>
    public long StoppedNoProgress => Interlocked.Read(ref _stoppedNoProgress);

    /// <summary>Completes the broker refused (the worker's view of the database's rejected completes).</summary>
    public long RejectedByBroker => Interlocked.Read(ref _rejectedByBroker);

    /// <summary>Completes the broker accepted.</summary>
    public long Completed => Interlocked.Read(ref _completed);

    /// <summary>Broker calls that failed after the bus's own reconnection budget (the worker backed off and went on).</summary>
    public long ConnectionErrors => Interlocked.Read(ref _connectionErrors);

    /// <summary>The longest time between the receive or a renewal of a lease and its next renewal attempt.</summary>
    public TimeSpan WorstRenewGap => TimeSpan.FromTicks(Interlocked.Read(ref _worstRenewGapTicks));

    /// <summary>The most threads the process had (threadpool mode: the pool's injected threads show here).</summary>
    public int PeakThreads => Volatile.Read(ref _peakThreads);

    public void LeaseLost() => Interlocked.Increment(ref _stoppedLeaseLost);

    public void NoProgress() => Interlocked.Increment(ref _stoppedNoProgress);

    public void Rejected() => Interlocked.Increment(ref _rejectedByBroker);

    public void Accepted() => Interlocked.Increment(ref _completed);

    public void ConnectionError() => Interlocked.Increment(ref _connectionErrors);

    public void RenewGap(TimeSpan gap) => Max(ref _worstRenewGapTicks, gap.Ticks);

    public void SampleThreads(int count)
    {
        int peak = Volatile.Read(ref _peakThreads);
        while (count > peak && Interlocked.CompareExchange(ref _peakThreads, count, peak) != peak)
        {
            peak = Volatile.Read(ref _peakThreads);
        }
    }

    private static void Max(ref long field, long value)
    {
        long current = Interlocked.Read(ref field);
        while (value > current && Interlocked.CompareExchange(ref field, value, current) != current)
        {
            current = Interlocked.Read(ref field);
        }
    }
}
