using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// One operation's retries after a lost connection, as every lease queue makes them: exponential back-off with up to 50% jitter,
/// from <see cref="LeaseQueueOptions.ReconnectInitialDelay"/> doubling to <see cref="LeaseQueueOptions.ReconnectMaxDelay"/>, until
/// the next wait would end past <see cref="LeaseQueueOptions.ReconnectTimeout"/> from the operation's start.
/// </summary>
/// <remarks>Created on an operation's first failure only, so that an operation that succeeds at once allocates nothing.</remarks>
/// <param name="options">The queue's settings.</param>
/// <param name="start">When the operation started (<see cref="Stopwatch.GetTimestamp"/>).</param>
public sealed class Backoff(LeaseQueueOptions options, long start)
{
    private TimeSpan _delay = options.ReconnectInitialDelay;

    /// <summary>How long since the operation started.</summary>
    public TimeSpan Elapsed => Stopwatch.GetElapsedTime(start);

    /// <summary>Whether the budget allows one more wait and attempt.</summary>
    public bool CanRetry => Elapsed + _delay <= options.ReconnectTimeout;

    /// <summary>Whether retrying is on at all (a reconnect timeout above zero).</summary>
    public bool Retries => options.ReconnectTimeout > TimeSpan.Zero;

    /// <summary>Waits the current delay with jitter, then doubles it up to the largest.</summary>
    public async Task WaitAsync(CancellationToken cancellationToken)
    {
        await Task.Delay(_delay * (1.0 + (Random.Shared.NextDouble() * 0.5)), cancellationToken).ConfigureAwait(false);
        _delay = _delay * 2 < options.ReconnectMaxDelay ? _delay * 2 : options.ReconnectMaxDelay;
    }
}
