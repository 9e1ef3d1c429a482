using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// A lease queue's reconnect loop, one per queue object: runs an operation's attempts until one succeeds. An attempt whose
/// connection failed throws <see cref="RetryableConnectionException"/>; it is tried again after a back-off, exponential with up to
/// 50% jitter from <see cref="LeaseQueueOptions.ReconnectInitialDelay"/> doubling to <see cref="LeaseQueueOptions.ReconnectMaxDelay"/>,
/// at least once (unless <see cref="LeaseQueueOptions.ReconnectTimeout"/> is zero: a first attempt slowed past the timeout by a busy
/// machine is still tried again) and then until the next wait would end past the timeout from the operation's start; then the
/// operation gives up with a <see cref="QueueConnectionException"/> saying "(still failing after … s)". Any other exception ends it at
/// once.
/// </summary>
/// <param name="options">The queue's settings.</param>
/// <param name="server">The server's kind, for the messages: <c>PostgreSQL</c>, <c>Redis</c>, <c>RabbitMQ</c>.</param>
/// <param name="endpoint">Where, for the messages: <c>host:port</c>, and for example <c>, database 'q', user 'u'</c>.</param>
public sealed class Reconnector(LeaseQueueOptions options, string server, string endpoint)
{
    private long _reconnects;

    /// <summary>How many times an operation retried, plus the reconnections the queue counted itself (<see cref="CountReconnect"/>).</summary>
    public long Reconnects => Interlocked.Read(ref _reconnects);

    /// <summary>Counts a reconnection the loop did not make (a client that reconnects by itself, a connection opened again).</summary>
    public void CountReconnect() => Interlocked.Increment(ref _reconnects);

    /// <summary>The failure that no retry can mend: "Cannot connect to {server} at {endpoint}: <paramref name="reason"/>".</summary>
    public QueueConnectionException Error(string reason, Exception? cause) => new(server, endpoint, reason, cause);

    /// <summary>Runs <paramref name="attempt"/> until it succeeds, retrying it while it throws <see cref="RetryableConnectionException"/>
    /// and the reconnect budget allows.</summary>
    /// <param name="attempt">One attempt of the operation.</param>
    /// <param name="cancellationToken">Ends the wait between attempts.</param>
    public async Task<T> RunAsync<T>(Func<Task<T>> attempt, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(attempt);
        long start = Stopwatch.GetTimestamp();
        TimeSpan delay = options.ReconnectInitialDelay;
        bool retried = false;
        while (true)
        {
            RetryableConnectionException failure;
            try
            {
                return await attempt().ConfigureAwait(false);
            }
            catch (RetryableConnectionException e)
            {
                failure = e;
            }

            TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
            if (options.ReconnectTimeout <= TimeSpan.Zero || (retried && elapsed + delay > options.ReconnectTimeout))
            {
                string after = $" (still failing after {(failure.Reconnecting ? "reconnecting" : "retrying")} for {elapsed.TotalSeconds:0.#} s)";
                throw Error(failure.Message + (options.ReconnectTimeout > TimeSpan.Zero ? after : ""), failure.InnerException);
            }

            retried = true;
            CountReconnect();
            await Task.Delay(delay * (1.0 + (Random.Shared.NextDouble() * 0.5)), cancellationToken).ConfigureAwait(false);
            delay = delay * 2 < options.ReconnectMaxDelay ? delay * 2 : options.ReconnectMaxDelay;
        }
    }
}
