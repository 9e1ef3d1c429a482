using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using LeaseWorker.Core;

namespace LeaseWorker;

/// <summary>What a span of a message's lane shows.</summary>
public enum SpanKind
{
    /// <summary>The receive I/O that delivered the message.</summary>
    Receive,

    /// <summary>A CPU part (or a slice of one) running.</summary>
    Cpu,

    /// <summary>An I/O part of a processing step, while the I/O itself takes.</summary>
    Io,

    /// <summary>A lease refresh round trip (request to the worker resuming after the reply).</summary>
    Refresh,

    /// <summary>The acknowledgement round trip.</summary>
    Ack,

    /// <summary>Ready but not running: the I/O or the refresh timer completed, the continuation waits for the worker's thread.</summary>
    Waiting,
}

/// <summary>
/// What happened to each message during one run, for <c>--timeline</c>: spans per message (receive, CPU, I/O, refreshes, waiting)
/// coloured by the activity (so by the level in the priority mode), and the moment a lease was lost. Any thread.
/// </summary>
public sealed class Timeline(string mode)
{
    private TimeProvider _clock = TimeProvider.System;
    private long _start = TimeProvider.System.GetTimestamp();
    private readonly ConcurrentQueue<Span> _spans = new();
    private readonly ConcurrentQueue<(int Message, TimeSpan At)> _lost = new();

    public string Mode { get; } = mode;

    public IReadOnlyList<Span> Spans => _spans.ToArray();

    public IReadOnlyList<(int Message, TimeSpan At)> Lost => _lost.ToArray();

    /// <summary>The end of the last span: the run's length as the timeline saw it.</summary>
    public TimeSpan End => _spans.IsEmpty ? TimeSpan.Zero : _spans.Max(s => s.End);

    /// <summary>Time zero: called as the mode starts running the worker, with the run's clock (the system's, or the virtual one),
    /// whose timestamps <see cref="Add"/> takes.</summary>
    public void Start(TimeProvider clock)
    {
        ArgumentNullException.ThrowIfNull(clock);
        _clock = clock;
        _start = clock.GetTimestamp();
    }

    public void Add(int message, SpanKind kind, Activity activity, long start, long end)
    {
        if (end > start)
        {
            _spans.Enqueue(new Span(message, kind, activity, Elapsed(start), Elapsed(end)));
        }
    }

    /// <summary>The worker learnt that the lease of <paramref name="message"/> is gone (a failed refresh or a rejected ack).</summary>
    public void LeaseLost(int message) => _lost.Enqueue((message, Elapsed(_clock.GetTimestamp())));

    private TimeSpan Elapsed(long timestamp) => _clock.GetElapsedTime(_start, timestamp);

    /// <summary>One span of a message's lane, in time since the run started.</summary>
    public readonly record struct Span(int Message, SpanKind Kind, Activity Activity, TimeSpan Start, TimeSpan End);
}
