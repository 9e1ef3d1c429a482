using System;
using System.Threading;
using System.Threading.Tasks;
using LeaseWorker.Core;
using MessageBus;

namespace BrokerWorker.Processing;

/// <summary>
/// The seed's worker against a broker: take a message under a lease, keep the lease alive while processing it in steps of CPU
/// then I/O, complete it. <see cref="Options.Concurrency"/> slots per worker, each one message at a time. The same code runs in
/// every mode; the <see cref="Mode"/> decides what each scheduling point does and who renews.
/// </summary>
/// <remarks>
/// Invariants (the fault tests check them from the database's counts):
/// <list type="bullet">
/// <item>A message is completed only by a slot whose lease was never refused: once a renewal is refused (or given up for lack of
/// progress), the lease's token is cancelled, processing stops at its next step or slice, and no complete is sent.</item>
/// <item>A slot never drops a message silently: every lease it took ends in a complete, an abandon (stopping) or an expiry (lost,
/// so the broker redelivers it). A worker killed at any point leaves only expiries.</item>
/// <item>A worker returns only when the broker has completed every message the producer announced (<see cref="Options.Messages"/>),
/// or when it is stopped.</item>
/// </list>
/// </remarks>
public sealed class MessageWorker(IMessageBus bus, Mode mode, Options options, WorkerStats stats, Heartbeat? heartbeat)
{
    private static readonly TimeSpan MaxBackoff = TimeSpan.FromSeconds(2);
    private readonly TimeSpan _lease = options.Scaled(options.Lease);
    private readonly TimeSpan _renewEvery = options.Scaled(options.RenewEvery);
    private readonly TimeSpan _io = options.Scaled(options.Io);
    private readonly TimeSpan _slice = options.ScaledCpu / options.SlicesPerCpuPart;
    private readonly int _slices = options.SlicesPerCpuPart;
    private readonly string? _hangPayload = options.HangMessage > 0 ? $"message {options.HangMessage}" : null;
    private readonly TimeSpan _progressTimeout = options.ScaledProgressTimeout;

    /// <summary>Runs the slots until the queue is done or <paramref name="stopping"/> is cancelled.</summary>
    public async Task RunAsync(CancellationToken stopping)
    {
        var slots = new Task[options.Concurrency];
        for (int i = 0; i < slots.Length; i++)
        {
            slots[i] = RunSlotAsync(stopping);
        }

        await Task.WhenAll(slots);
    }

    private async Task RunSlotAsync(CancellationToken stopping)
    {
        await mode.Begin(Activity.Receiving);
        TimeSpan backoff = TimeSpan.FromMilliseconds(50);
        while (!stopping.IsCancellationRequested)
        {
            await mode.MoveTo(Activity.Receiving);

            // Once the broker delivers, the lease is ticking: the reply is handled as lease work, at the most urgent level.
            await mode.MoveTo(Activity.Lease);
            Lease? lease;
            try
            {
                // Not cancelled by the stopping token: a receive abandoned in flight could lease a message nobody handles.
                lease = await bus.ReceiveAsync(_lease, CancellationToken.None);
                backoff = TimeSpan.FromMilliseconds(50);
                if (lease is null)
                {
                    if ((await bus.GetCountsAsync(CancellationToken.None)).Completed >= options.Messages)
                    {
                        return;
                    }

                    // Messages remain but none is available: leased by others (maybe expiring) or not produced yet.
                    await Task.Delay(_renewEvery / 2, mode.Time, stopping).ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
                    continue;
                }
            }
            catch (Exception e) when (IsConnectionFault(e))
            {
                // The bus reconnected with back-off for its whole budget and gave up: the database is down for longer. Keep trying,
                // slower, until it is back or the worker is stopped.
                stats.ConnectionError();
                await Task.Delay(backoff, mode.Time, stopping).ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
                backoff = backoff * 2 < MaxBackoff ? backoff * 2 : MaxBackoff;
                continue;
            }

            await HandleAsync(lease, stopping);
        }
    }

    private async Task HandleAsync(Lease lease, CancellationToken stopping)
    {
        using var message = new InFlight(lease, mode.Time, stopping);
        Task renewal = Task.CompletedTask;
        if (heartbeat is not null)
        {
            heartbeat.Register(message);
        }
        else
        {
            renewal = KeepLeaseAsync(message);
        }

        bool processed = await ProcessAsync(message);
        message.Finish();
        heartbeat?.Unregister(message);
        await renewal;

        await mode.MoveTo(Activity.Lease);
        try
        {
            if (message.Lost)
            {
                return; // the lease is gone or given up: the broker redelivers the message once it expires
            }

            if (processed)
            {
                if (await bus.CompleteAsync(lease, CancellationToken.None))
                {
                    stats.Accepted();
                }
                else
                {
                    stats.Rejected();
                }
            }
            else if (stopping.IsCancellationRequested)
            {
                await bus.AbandonAsync(lease, CancellationToken.None); // hand it back now, not when its lease expires
            }
        }
        catch (Exception e) when (IsConnectionFault(e))
        {
            // Unknown whether the complete was applied: if not, the lease expires and the message is redelivered. Nothing is lost.
            stats.ConnectionError();
        }
    }

    /// <summary>Renews the lease every interval until processing is done; stops, and cancels the lease's token, when the broker
    /// refuses or (modes whose renewal follows progress) when processing has not advanced for the progress timeout.</summary>
    private async Task KeepLeaseAsync(InFlight message)
    {
        await mode.Begin(Activity.Lease);

        // Fixed rate: each renewal is due one interval after the previous one was sent, not after its reply was handled. On a busy
        // thread the reply waits for a CPU part as the send did; counting the interval from the reply would put two such waits
        // between the renewals the broker sees, and halve the slack the lease leaves.
        long lastSent = mode.Time.GetTimestamp();
        while (true)
        {
            TimeSpan wait = _renewEvery - mode.Time.GetElapsedTime(lastSent);
            await Task.Delay(wait > TimeSpan.Zero ? wait : TimeSpan.Zero, mode.Time, message.Done)
                .ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
            await mode.MoveTo(Activity.Lease);
            if (message.Done.IsCancellationRequested)
            {
                return;
            }

            if (mode.RenewalFollowsProgress && message.StuckFor > _progressTimeout)
            {
                // The message's processing has been waiting on an external call that has not answered for the progress timeout:
                // it is stuck (a message queued for this thread is never "stuck"). Give the lease up: it lapses and another worker
                // takes the message.
                stats.NoProgress();
                message.Lose();
                return;
            }

            stats.RenewGap(message.SinceRenewed);
            bool renewed;
            lastSent = mode.Time.GetTimestamp();
            try
            {
                renewed = await bus.RenewAsync(message.Lease, _lease, CancellationToken.None);
            }
            catch (Exception e) when (IsConnectionFault(e))
            {
                stats.ConnectionError();
                renewed = false;
            }

            await mode.MoveTo(Activity.Lease);
            if (renewed)
            {
                message.Renewed();
            }
            else if (!message.Done.IsCancellationRequested)
            {
                stats.LeaseLost();
                message.Lose(); // the per-lease token: processing stops at its next step or slice
                return;
            }
        }
    }

    /// <summary>Processes the message: steps of CPU work then I/O. False when its lease's token was cancelled first.</summary>
    private async Task<bool> ProcessAsync(InFlight message)
    {
        await mode.Begin(Activity.Processing);
        CancellationToken token = message.Token;
        for (int step = 0; step < options.Steps; step++)
        {
            for (int slice = 0; slice < _slices; slice++)
            {
                if (slice > 0)
                {
                    await mode.Checkpoint(Activity.Processing); // only with --checkpoint: let renewals in
                }

                if (token.IsCancellationRequested)
                {
                    return false;
                }

                if (mode.Clock is null)
                {
                    stats.SampleThreads(ThreadPool.ThreadCount);
                }

                mode.RunCpu(CpuKind.Spin, _slice);
            }

            if (step == 0 && message.Lease.DeliveryCount == 1 && message.Lease.Payload == _hangPayload)
            {
                // --hang-message: an I/O call that never answers (it honours the lease's token, as a call given one does).
                await message.Waiting(Task.Delay(Timeout.InfiniteTimeSpan, token)).ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
                await mode.MoveTo(Activity.Processing);
                return false;
            }

            await message.Waiting(Task.Delay(_io, mode.Time, token)).ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
            await mode.MoveTo(Activity.Processing);
            if (token.IsCancellationRequested)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>A broker call that failed after the bus's own reconnection budget, or a refused statement or script: back off, go on.</summary>
    internal static bool IsConnectionFault(Exception e) => Bus.BusFactory.IsBrokerFailure(e) || e is TimeoutException;
}
