using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using MessageBus;

namespace BrokerWorker.Processing;

/// <summary>
/// The heartbeat-thread mode's renewer: one dedicated thread that renews every registered lease each renewal interval, blocking on
/// the broker's reply, whatever the processing thread is doing. It does not look at progress: a hung message is renewed forever.
/// </summary>
public sealed class Heartbeat : IDisposable
{
    private readonly IMessageBus _bus;
    private readonly TimeSpan _every;
    private readonly TimeSpan _lease;
    private readonly WorkerStats _stats;
    private readonly List<InFlight> _leases = [];
    private readonly object _renewing = new(); // held by the renewer for each renewal, from its check of Done to the reply
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread _thread;

    public Heartbeat(IMessageBus bus, TimeSpan every, TimeSpan lease, WorkerStats stats)
    {
        _bus = bus;
        _every = every;
        _lease = lease;
        _stats = stats;
        _thread = new Thread(Run) { IsBackground = true, Name = "heartbeat" };
        _thread.Start();
    }

    public void Register(InFlight message)
    {
        lock (_leases)
        {
            _leases.Add(message);
        }
    }

    /// <summary>Stops renewing <paramref name="message"/>, whose processing is finished (<see cref="InFlight.Finish"/> was called):
    /// waits for a renewal of it in progress, so that a complete sent next never races a renewal (which the broker would refuse
    /// and count as failed).</summary>
    public void Unregister(InFlight message)
    {
        lock (_leases)
        {
            _leases.Remove(message);
        }

        lock (_renewing)
        {
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _thread.Join();
        _stop.Dispose();
    }

    private void Run()
    {
        while (!_stop.Token.WaitHandle.WaitOne(_every))
        {
            InFlight[] registered;
            lock (_leases)
            {
                registered = [.. _leases];
            }

            lock (_renewing)
            {
                RenewAll(registered);
            }
        }
    }

    // Every lease in one request where the broker allows it (Redis: one script; PostgreSQL: one statement), as BullMQ's lock
    // extender renews all of a worker's locks at once.
    private void RenewAll(InFlight[] registered)
    {
        var due = new List<InFlight>(registered.Length);
        foreach (InFlight message in registered)
        {
            if (!message.Done.IsCancellationRequested && !message.Lost)
            {
                _stats.RenewGap(message.SinceRenewed);
                due.Add(message);
            }
        }

        if (due.Count == 0)
        {
            return;
        }

        bool[] renewed;
        try
        {
            renewed = _bus.RenewAllAsync([.. due.Select(m => m.Lease)], _lease, CancellationToken.None).AsTask().GetAwaiter().GetResult();
        }
        catch (Exception e) when (MessageWorker.IsConnectionFault(e))
        {
            _stats.ConnectionError();
            renewed = new bool[due.Count];
        }

        for (int i = 0; i < due.Count; i++)
        {
            if (renewed[i])
            {
                due[i].Renewed();
            }
            else if (!due[i].Done.IsCancellationRequested)
            {
                _stats.LeaseLost();
                due[i].Lose();
            }
        }
    }
}
