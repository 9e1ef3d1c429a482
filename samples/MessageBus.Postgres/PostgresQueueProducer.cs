using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus.Postgres;

/// <summary>Fills a <see cref="PostgresLeaseQueue"/> with messages: all at once in batches, or at a steady rate.</summary>
public sealed class PostgresQueueProducer
{
    private readonly PostgresLeaseQueue _queue;
    private readonly TimeProvider _time;

    /// <summary>Creates a producer.</summary>
    /// <param name="queue">The queue it fills.</param>
    /// <param name="time">The clock that paces a rate-limited fill; the system clock by default.</param>
    public PostgresQueueProducer(PostgresLeaseQueue queue, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(queue);
        _queue = queue;
        _time = time ?? TimeProvider.System;
    }

    /// <summary>The largest number of messages one insert statement carries.</summary>
    /// <value>The default value is 500.</value>
    public int BatchSize { get; init; } = 500;

    /// <summary>
    /// Enqueues <paramref name="count"/> messages, message <c>i</c> (from 0) with the payload <paramref name="payload"/>(i). With a
    /// rate, message <c>i</c> is sent no earlier than <c>i / messagesPerSecond</c> seconds after the start (batched when behind).
    /// </summary>
    /// <param name="count">How many messages to enqueue: 0 or more.</param>
    /// <param name="payload">The payload of message <c>i</c>.</param>
    /// <param name="messagesPerSecond">The rate; 0 (the default) sends everything at once.</param>
    /// <param name="cancellationToken">Stops the fill; messages already enqueued stay.</param>
    /// <returns>How many messages were enqueued (<paramref name="count"/>, unless cancelled, which throws).</returns>
    public async Task<int> FillAsync(int count, Func<int, string> payload, double messagesPerSecond = 0, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentNullException.ThrowIfNull(payload);
        if (double.IsNaN(messagesPerSecond) || messagesPerSecond < 0 || double.IsInfinity(messagesPerSecond))
        {
            throw new ArgumentOutOfRangeException(nameof(messagesPerSecond), messagesPerSecond, "messagesPerSecond must be 0 (no limit) or a positive finite rate.");
        }

        if (BatchSize < 1)
        {
            throw new InvalidOperationException($"BatchSize is {BatchSize}; it must be at least 1.");
        }

        long start = _time.GetTimestamp();
        List<string> batch = new(Math.Min(count, BatchSize));
        int sent = 0;
        while (sent < count)
        {
            int due = count;
            if (messagesPerSecond > 0)
            {
                double elapsed = _time.GetElapsedTime(start).TotalSeconds;
                due = (int)Math.Min(count, Math.Floor(elapsed * messagesPerSecond) + 1);
                if (due <= sent)
                {
                    TimeSpan wait = TimeSpan.FromSeconds((sent / messagesPerSecond) - elapsed);
                    await Task.Delay(wait > TimeSpan.Zero ? wait : TimeSpan.FromMilliseconds(1), _time, cancellationToken).ConfigureAwait(false);
                    continue;
                }
            }

            batch.Clear();
            for (int i = sent; i < due && batch.Count < BatchSize; i++)
            {
                batch.Add(payload(i));
            }

            sent += await _queue.EnqueueAsync(batch, cancellationToken).ConfigureAwait(false);
        }

        return sent;
    }
}
