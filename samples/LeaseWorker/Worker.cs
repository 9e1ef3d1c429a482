using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using LeaseWorker.Core;
using PriorityAsync;

namespace LeaseWorker;

/// <summary>
/// The seed's worker: receive a message, keep its lease alive in the background, process it in steps of CPU then I/O, acknowledge
/// it. The same code runs in every mode; the <see cref="Mode"/> decides what each scheduling point (<c>await _mode....</c>) does.
/// </summary>
public sealed class Worker
{
    private readonly LeaseBus _bus;
    private readonly Mode _mode;
    private readonly CpuKind _cpuKind;
    private readonly int _steps;
    private readonly int _slices;
    private readonly TimeSpan _slice;
    private readonly TimeSpan _lastSlice; // the rest of the part: the slices add up to it exactly
    private readonly TimeSpan _io;
    private readonly TimeSpan _refreshDelay;
    private readonly Timeline? _timeline; // --timeline: what happened to each message, else null
    private readonly TimeProvider _clock; // the run's clock: the system's (Stopwatch), or the virtual one
    private int _busyThreads;
    private int _peakBusyThreads;
    private long _worstTimerLatenessTicks;

    public Worker(LeaseBus bus, Mode mode, Settings settings, Timeline? timeline = null)
    {
        _timeline = timeline;
        ArgumentNullException.ThrowIfNull(settings);
        _bus = bus;
        _mode = mode;
        _cpuKind = settings.CpuKind;
        _steps = settings.Steps;
        _slices = settings.SlicesPerCpuPart;
        _slice = settings.Scaled(settings.Cpu) / _slices;
        _lastSlice = settings.Scaled(settings.Cpu) - (_slices - 1) * _slice;
        _io = settings.Scaled(settings.Io);
        _refreshDelay = settings.Scaled(settings.RefreshDelay);
        _clock = (TimeProvider?)mode.Clock ?? TimeProvider.System;
    }

    /// <summary>The most threads that were inside a CPU part at the same time.</summary>
    public int PeakBusyThreads => Volatile.Read(ref _peakBusyThreads);

    /// <summary>
    /// The longest a refresh delay's continuation ran after the delay was due: the timer's own lateness plus the wait for the
    /// worker's thread, as the lease code saw it.
    /// </summary>
    public TimeSpan WorstTimerLateness => TimeSpan.FromTicks(Interlocked.Read(ref _worstTimerLatenessTicks));

    /// <summary>The receive loop: runs until the bus is empty and every message it took is done.</summary>
    public async Task RunAsync()
    {
        var inFlight = new List<Task>();
        await _mode.Begin(Activity.Receiving);
        while (true)
        {
            // Take a message only when nothing more urgent waits (in the priority modes): the back-pressure of the seed.
            await _mode.MoveTo(Activity.Receiving);

            // Once the bus delivers, the lease is ticking: the delivery is handled as lease work, at the most urgent level.
            await _mode.MoveTo(Activity.Lease);
            long receiveStart = Now();
            Lease? lease = await _bus.ReceiveAsync(_mode.Time);
            await _mode.Resumed(Activity.Lease);
            if (lease is null)
            {
                break;
            }

            _timeline?.Add(lease.Id, SpanKind.Receive, Activity.Receiving, receiveStart, Now());

            var message = new InFlightMessage(lease);
            inFlight.Add(KeepLeaseAsync(message));
            inFlight.Add(ProcessAsync(message));
        }

        await Task.WhenAll(inFlight);
    }

    /// <summary>Refreshes the lease every refresh delay until processing is done; stops when the bus says the lease is gone.</summary>
    private async Task KeepLeaseAsync(InFlightMessage message)
    {
        await _mode.Begin(Activity.Lease);
        while (true)
        {
            // Resume on the captured context even when processing finishes first and cancels the wait (no exception).
            long delayStart = Now();
            await Task.Delay(_refreshDelay, _mode.Time, message.Done)
                .ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
            await _mode.Resumed(Activity.Lease);
            if (message.Done.IsCancellationRequested)
            {
                return;
            }

            RecordTimerLateness(_clock.GetElapsedTime(delayStart) - _refreshDelay);
            long refreshStart = Now();
            _timeline?.Add(message.Lease.Id, SpanKind.Waiting, Activity.Lease, After(delayStart, _refreshDelay), refreshStart);
            bool renewed = await _bus.RefreshAsync(message.Lease, _mode.Time);
            await _mode.Resumed(Activity.Lease);
            _timeline?.Add(message.Lease.Id, SpanKind.Refresh, Activity.Lease, refreshStart, Now());
            if (!renewed)
            {
                _timeline?.LeaseLost(message.Lease.Id);
                message.LeaseLost = true; // the worker learns it from the bus; processing stops at its next step
                return;
            }
        }
    }

    /// <summary>Processes the message: steps of CPU work then I/O, then the acknowledgement, which the bus may reject.</summary>
    private async Task ProcessAsync(InFlightMessage message)
    {
        await _mode.Begin(Activity.Processing);
        for (int step = 0; step < _steps && !message.LeaseLost; step++)
        {
            for (int slice = 0; slice < _slices; slice++)
            {
                if (slice > 0)
                {
                    await _mode.Checkpoint(Activity.Processing); // only with --checkpoint: let more urgent work in
                }

                long cpuStart = Now();
                RunCpuSlice(slice == _slices - 1 ? _lastSlice : _slice);
                _timeline?.Add(message.Lease.Id, SpanKind.Cpu, Activity.Processing, cpuStart, Now());
            }

            long ioStart = Now();
            await Task.Delay(_io, _mode.Time);
            await _mode.Resumed(Activity.Processing);
            _timeline?.Add(message.Lease.Id, SpanKind.Io, Activity.Processing, ioStart, After(ioStart, _io));
            _timeline?.Add(message.Lease.Id, SpanKind.Waiting, Activity.Processing, After(ioStart, _io), Now());
        }

        if (!message.LeaseLost)
        {
            message.Finish(); // stop refreshing; the bus judges the acknowledgement against the lease it recorded
            long ackStart = Now();
            bool accepted = await _bus.AckAsync(message.Lease, _mode.Time);
            await _mode.Resumed(Activity.Processing);
            _timeline?.Add(message.Lease.Id, SpanKind.Ack, Activity.Processing, ackStart, Now());
            if (!accepted)
            {
                _timeline?.LeaseLost(message.Lease.Id);
            }
        }

        message.Finish();
    }

    /// <summary>A timestamp of the run's clock, for the timeline and the timer lateness.</summary>
    private long Now() => _clock.GetTimestamp();

    /// <summary>The timestamp <paramref name="duration"/> after <paramref name="timestamp"/> on the run's clock.</summary>
    private long After(long timestamp, TimeSpan duration) => timestamp + (long)(duration.TotalSeconds * _clock.TimestampFrequency);

    private void RecordTimerLateness(TimeSpan lateness)
    {
        long ticks = lateness.Ticks;
        long worst = Interlocked.Read(ref _worstTimerLatenessTicks);
        while (ticks > worst && Interlocked.CompareExchange(ref _worstTimerLatenessTicks, ticks, worst) != worst)
        {
            worst = Interlocked.Read(ref _worstTimerLatenessTicks);
        }
    }

    private void RunCpuSlice(TimeSpan duration)
    {
        int busy = Interlocked.Increment(ref _busyThreads);
        int peak = Volatile.Read(ref _peakBusyThreads);
        while (busy > peak && Interlocked.CompareExchange(ref _peakBusyThreads, busy, peak) != peak)
        {
            peak = Volatile.Read(ref _peakBusyThreads);
        }

        try
        {
            _mode.RunCpu(_cpuKind, duration);
        }
        finally
        {
            Interlocked.Decrement(ref _busyThreads);
        }
    }

    /// <summary>The worker's view of a message: the lease the bus gave it, and what it has learnt.</summary>
    private sealed class InFlightMessage(Lease lease)
    {
        private readonly CancellationTokenSource _done = new();
        private volatile bool _leaseLost;

        public Lease Lease { get; } = lease;

        public CancellationToken Done => _done.Token;

        public bool LeaseLost
        {
            get => _leaseLost;
            set => _leaseLost = value;
        }

        public void Finish() => _done.Cancel();
    }
}
