using System;
using System.Threading;
using System.Threading.Tasks;
using MessageBus;

namespace BrokerWorker.Processing;

/// <summary>
/// One message in flight: the lease, the lease's <see cref="CancellationToken"/> (cancelled when a renewal is refused, when renewal
/// stops for lack of progress, or when the worker stops) and the progress stamp (when the current external wait began). Read by the renewer, which may be another thread.
/// </summary>
public sealed class InFlight : IDisposable
{
    private readonly CancellationTokenSource _lease;
    private readonly CancellationTokenSource _done = new();
    private readonly TimeProvider _time;
    private long _waitingSince; // timestamp (of _time) of the start of the external wait in progress, or 0
    private long _renewed;
    private volatile bool _lost;

    /// <param name="lease">The broker's lease.</param>
    /// <param name="time">The mode's clock (the system's, or the run's virtual clock): the progress stamp and the renewal gap are read on it.</param>
    /// <param name="stopping">The worker's stop: it cancels the lease's token too.</param>
    public InFlight(Lease lease, TimeProvider time, CancellationToken stopping)
    {
        Lease = lease;
        _lease = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        _time = time;
        _renewed = time.GetTimestamp();
    }

    public Lease Lease { get; }

    /// <summary>Cancelled when the worker must stop working on this message.</summary>
    public CancellationToken Token => _lease.Token;

    /// <summary>Cancelled when processing is over: renewal stops.</summary>
    public CancellationToken Done => _done.Token;

    /// <summary>The broker refused a renewal, or renewal was given up: the message is someone else's now (or will be).</summary>
    public bool Lost => _lost;

    /// <summary>
    /// How long the message's processing has been waiting for something outside the worker (an I/O call) that has not answered;
    /// zero when it is not waiting outside. Time spent queued for the worker's own thread does not count: that is the worker
    /// being busy, not the message being stuck.
    /// </summary>
    public TimeSpan StuckFor => Interlocked.Read(ref _waitingSince) is var since and not 0 ? _time.GetElapsedTime(since) : TimeSpan.Zero;

    /// <summary>How long since the lease was taken or last renewed (the worker's view).</summary>
    public TimeSpan SinceRenewed => _time.GetElapsedTime(Interlocked.Read(ref _renewed));

    /// <summary>Processing starts waiting for <paramref name="call"/>, an external call: the progress stamp runs until the call
    /// itself completes (marked by the completion, on whatever thread completes it, not when the loop gets round to resuming).</summary>
    public Task Waiting(Task call)
    {
        Interlocked.Exchange(ref _waitingSince, _time.GetTimestamp());
        call.ContinueWith(static (_, state) => Interlocked.Exchange(ref ((InFlight)state!)._waitingSince, 0), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        return call;
    }

    public void Renewed() => Interlocked.Exchange(ref _renewed, _time.GetTimestamp());

    /// <summary>Stop working on the message: its lease is gone or given up.</summary>
    public void Lose()
    {
        _lost = true;
        try
        {
            _lease.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // Processing already finished and disposed the token: nothing left to stop.
        }
    }

    public void Finish() => _done.Cancel();

    /// <summary>Unlinks the lease's token from the stopping token. <see cref="Done"/> stays readable: a renewer may still look.</summary>
    public void Dispose() => _lease.Dispose();
}
