using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus.RabbitMq.Internal;

/// <summary>
/// A queue's record: the events every queue object appends to the queue's stream, folded in the stream's order into the counts
/// (README, "The record"). Every process that reads the stream from its start folds the same events in the same order and so
/// reaches the same counts, and the same verdicts: which completion of a message came first, which delivery is of a message
/// already completed.
/// </summary>
/// <remarks>Thread safety: <see cref="Apply"/> is called by the one reader of the stream; the other members from any thread.</remarks>
internal sealed class QueueRecord(string instance)
{
    /// <summary>Enqueued (a = how many; the verdict is the first id), delivered (a = id, b = token, flag = the broker's
    /// redelivered flag; the verdict is 1 for a message already completed), completed (the verdict is 1 for the message's first
    /// completion), abandoned, lapsed (the lease ran out and the queue requeued it: its next delivery is an expired one), a complete
    /// refused, a renewal refused, and a sync marker.</summary>
    public const char Enqueued = 'e', Delivered = 'd', Completed = 'c', Abandoned = 'a', Lapsed = 'l', CompleteRefused = 'r', RenewalRefused = 'f', Sync = 's';

    private readonly Lock _gate = new();
    private readonly Dictionary<long, Message> _messages = [];
    private readonly Dictionary<string, HashSet<long>> _seen = []; // events retried after a lost confirm are applied once
    private readonly ConcurrentDictionary<long, TaskCompletionSource<long>> _waiting = new();
    private long _seq;
    private long _enqueued, _delivered, _redelivered, _completed, _rejected, _failedRenewals, _abandoned, _leased, _expired;

    /// <summary>This queue object's name in the events it writes: its owner and a random suffix.</summary>
    public string Instance { get; } = instance;

    /// <summary>The offset of the next event to read: where the reader resumes after a reconnection.</summary>
    public long NextOffset { get; private set; }

    /// <summary>How many times the record was reset: a reader of an earlier stream (deleted since) applies nothing.</summary>
    public long Epoch { get; private set; }

    /// <summary>A new event of this queue object, as sent: its sequence number and its body. With <paramref name="verdict"/>, the
    /// returned task completes when the reader applies it, with the event's verdict.</summary>
    public (long Seq, byte[] Body, Task<long>? Verdict) Write(char kind, long a = 0, long b = 0, bool flag = false, bool verdict = false)
    {
        long seq = Interlocked.Increment(ref _seq);
        Task<long>? applied = null;
        if (verdict)
        {
            var waiter = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiting[seq] = waiter;
            applied = waiter.Task;
        }

        return (seq, Format(kind, Instance, seq, a, b, flag), applied);
    }

    /// <summary>Forgets a verdict that will never come (its event was never sent).</summary>
    public void Forget(long seq) => _waiting.TryRemove(seq, out _);

    /// <summary>An event's body: <c>kind instance seq a b flag</c>, in ASCII.</summary>
    public static byte[] Format(char kind, string instance, long seq, long a, long b, bool flag) =>
        Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"{kind} {instance} {seq} {a} {b} {(flag ? 1 : 0)}"));

    /// <summary>Folds the event at <paramref name="offset"/> of the stream; an offset already read, a duplicate, a malformed event
    /// or one read from the stream of an earlier <paramref name="epoch"/> (a reader still delivering after a purge) is skipped.</summary>
    public void Apply(long epoch, long offset, ReadOnlySpan<byte> body)
    {
        string[] f = Encoding.ASCII.GetString(body).Split(' ');
        long verdict = 0;
        lock (_gate)
        {
            if (epoch != Epoch || offset < NextOffset)
            {
                return;
            }

            NextOffset = offset + 1;
            if (f.Length != 6 || f[0].Length != 1 || !long.TryParse(f[2], CultureInfo.InvariantCulture, out long seq)
                || !long.TryParse(f[3], CultureInfo.InvariantCulture, out long a) || !long.TryParse(f[4], CultureInfo.InvariantCulture, out long b)
                || !(_seen.TryGetValue(f[1], out HashSet<long>? seen) ? seen : _seen[f[1]] = []).Add(seq))
            {
                return;
            }

            switch (f[0][0])
            {
                case Enqueued:
                    verdict = _enqueued + 1;
                    _enqueued += a;
                    break;
                case Delivered:
                    verdict = Deliver(MessageOf(a), (f[1], b), f[5] == "1") ? 1 : 0;
                    break;
                case Completed:
                    verdict = Complete(MessageOf(a)) ? 1 : 0;
                    break;
                case Abandoned:
                    _abandoned++;
                    Message abandoned = MessageOf(a);
                    if (abandoned.Holder == (f[1], b))
                    {
                        (abandoned.Holder, abandoned.AbandonedLast) = (null, true);
                        _leased--;
                    }

                    break;
                case Lapsed:
                    Message lapsed = MessageOf(a);
                    if (lapsed.Holder == (f[1], b))
                    {
                        lapsed.Holder = null; // requeued: ready at the broker, no longer leased (and not handed back)
                        _leased--;
                    }

                    break;
                case CompleteRefused:
                    _rejected++;
                    break;
                case RenewalRefused:
                    _failedRenewals++;
                    break;
            }

            if (f[1] != Instance || !_waiting.TryRemove(seq, out TaskCompletionSource<long>? waiter))
            {
                return;
            }

            // Outside the lock would be as good: the waiter's continuations run asynchronously.
            waiter.TrySetResult(verdict);
        }
    }

    /// <summary>The counts folded so far; <paramref name="available"/> is the broker's count of ready messages.</summary>
    public BusCounts Counts(long available)
    {
        lock (_gate)
        {
            return new BusCounts(_enqueued, _delivered, _redelivered, _completed, _rejected, _failedRenewals, _abandoned, _leased, available, _expired);
        }
    }

    /// <summary>Whether the record shows message <paramref name="id"/> completed, and how many deliveries of it it has.</summary>
    public (bool Completed, int Deliveries) Of(long id)
    {
        lock (_gate)
        {
            return _messages.TryGetValue(id, out Message? m) ? (m.Completed, m.Deliveries) : (false, 0);
        }
    }

    /// <summary>The queue objects that hold a delivery now, as the record shows (for the tests).</summary>
    public string[] Holders()
    {
        lock (_gate)
        {
            return [.. _messages.Values.Where(m => m.Holder is not null).Select(m => m.Holder!.Value.Instance)];
        }
    }

    /// <summary>Forgets everything (the stream was deleted); the verdicts still awaited fail.</summary>
    public void Reset()
    {
        lock (_gate)
        {
            _messages.Clear();
            _seen.Clear();
            NextOffset = 0;
            Epoch++;
            _enqueued = _delivered = _redelivered = _completed = _rejected = _failedRenewals = _abandoned = _leased = _expired = 0;
        }

        foreach (long seq in _waiting.Keys)
        {
            if (_waiting.TryRemove(seq, out TaskCompletionSource<long>? waiter))
            {
                waiter.TrySetException(new InvalidOperationException("The queue's record was deleted."));
            }
        }
    }

    private Message MessageOf(long id) => _messages.TryGetValue(id, out Message? m) ? m : _messages[id] = new Message();

    // A delivery is again when the broker flags it or the record has one before it; it was lost (expired) unless the one before it
    // was handed back. A delivery of a completed message is a copy whose holder's acknowledgement was lost: it is dropped, not leased.
    private bool Deliver(Message m, (string, long) holder, bool flagged)
    {
        bool again = flagged || m.Deliveries > 0;
        _delivered++;
        _redelivered += again ? 1 : 0;
        _expired += m.Completed || (again && !m.AbandonedLast) ? 1 : 0;
        m.Deliveries++;
        m.AbandonedLast = false;
        if (!m.Completed)
        {
            _leased += m.Holder is null ? 1 : 0;
            m.Holder = holder;
        }

        return m.Completed;
    }

    // The first completion of a message counts, whoever holds it now; any later one is refused (duplicate work).
    private bool Complete(Message m)
    {
        if (m.Completed)
        {
            _rejected++;
            return false;
        }

        _completed++;
        _leased -= m.Holder is null ? 0 : 1;
        (m.Completed, m.Holder) = (true, null);
        return true;
    }

    private sealed class Message
    {
        public (string Instance, long Token)? Holder { get; set; }

        public bool Completed { get; set; }

        public bool AbandonedLast { get; set; }

        public int Deliveries { get; set; }
    }
}
