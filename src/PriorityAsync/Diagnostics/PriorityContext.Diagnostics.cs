using System;
using System.Diagnostics;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The diagnostics side of the context: what the metrics, the EventSource and the trace recorder read, and the loop's slow path.
//
// Cost model. The loop reads _slowPaths once per item, Post once per post; with no listener it is 0 and nothing else happens. The
// counters behind the observable instruments (_runPerLevel, the queue counts) are kept anyway and read only when a
// listener collects. ContextRegistry sets _slowPaths when a listener enables a timing histogram, the EventSource is enabled, or a
// trace recorder starts; it is a hint (see "Diagnostics" in the protocols of Context/PriorityContext.cs).
//
// Clock reads. A timed item costs one read at its end; its start is the previous item's end when that item ran just before it in the
// same drain (the dequeue in between, a few tens of nanoseconds, is charged to this item), else one more read. Post adds one read
// while the queue-wait histogram is on. So a busy loop with every instrument on reads the clock twice per item.
public sealed partial class PriorityContext : IObservedScheduler
{
    private readonly TimeProvider? _clock;

    // Bits of SlowPaths. Written by ContextRegistry (any thread), read by the loop and by posters.
    internal int _slowPaths;

    // The inspector's state while a session inspects (Diagnostics/InspectorSampler.cs); null otherwise.
    private InspectorState? _inspection;

    // Loop thread only: when the last observed item ended, and the dispatch count at that moment (0: no usable end).
    private long _lastItemEnd;
    private long _lastItemSequence;

    /// <summary>Items run per level. Any thread.</summary>
    internal long GetRun(int level) => Volatile.Read(ref _runPerLevel[level]);

    string IObservedScheduler.Kind => nameof(PriorityContext);

    long IObservedScheduler.TimestampFrequency => TimestampFrequency;

    long IObservedScheduler.Timestamp() => Timestamp();

    long IObservedScheduler.GetRun(int level) => GetRun(level);

    int IObservedScheduler.GetQueued(int level) => _queues.Count(level);

    int IObservedScheduler.GetRunning(int level) => -1; // one item at most: the running gauge is the pool's

    void IObservedScheduler.SetSlowPaths(int paths) => Volatile.Write(ref _slowPaths, paths);

    void IObservedScheduler.ArmInspectOne() => Interlocked.Or(ref _slowPaths, SlowPaths.InspectOne);

    void IObservedScheduler.StopInspectingAll() => ContextRegistry.Refresh(this); // the state says "sampled" now: the bits follow

    int IObservedScheduler.InspectorId { get; set; }

    InspectorState? IObservedScheduler.Inspection
    {
        get => Volatile.Read(ref _inspection);
        set => Volatile.Write(ref _inspection, value);
    }

    int IObservedScheduler.Threads => 1;

    long IObservedScheduler.ThreadDispatchCount(int thread) => DispatchCount;

    bool IObservedScheduler.IsThreadParked(int thread) => IsParked || Volatile.Read(ref _loopThreadId) == 0;

    Thread? IObservedScheduler.GetThread(int thread) => Volatile.Read(ref _loopThread);

    string IObservedScheduler.PolicyName => _priorityPolicy.ToString() ?? string.Empty;

    TimeSpan? IObservedScheduler.TimeSliceSetting => _timeSliceTicks == 0 ? null : TimeSpan.FromSeconds(_timeSliceTicks / (double)Stopwatch.Frequency);

    TimeSpan? IObservedScheduler.StallTimeoutSetting => _stallTimeout;

    int IObservedScheduler.ArmedTimers => _loopTimers.ArmedCount;

    /// <summary>The clock's frequency, ticks per second.</summary>
    internal long TimestampFrequency => _clock?.TimestampFrequency ?? Stopwatch.Frequency;

    internal long Timestamp() => _clock?.GetTimestamp() ?? Stopwatch.GetTimestamp();

    /// <summary>Counts one dropped item and reports it, with the code it would have run, on the meter and the event source (any thread:
    /// a drop after the loop ended cannot go to UnhandledException, which runs on the loop).</summary>
    private void CountDrop(int level, DropReason reason, SendOrPostCallback callback, object? state)
    {
        Interlocked.Increment(ref _dropped);
        DroppedWork.Record(Name, level, reason, callback, state);
    }

    /// <summary>The loop's slow path: runs <paramref name="item"/> with whatever _slowPaths asks for around it. Loop thread only.</summary>
    private void InvokeObserved(in WorkItem item, int level)
    {
        int paths = _slowPaths;
        if ((paths & SlowPaths.InspectOne) != 0)
        {
            // The period's one sample: taken by clearing the bit (a refresh may have cleared it first: then no sample).
            paths = (Interlocked.And(ref _slowPaths, ~SlowPaths.InspectOne) & SlowPaths.InspectOne) != 0 ? paths : paths & ~SlowPaths.InspectOne;
        }

        if ((paths & ~SlowPaths.WaitTime) == 0)
        {
            item.Invoke();
            return;
        }

        long start = 0;
        long sequence = 0;
        if ((paths & SlowPaths.Timed) != 0)
        {
            sequence = DispatchCount; // includes this item
            start = _lastItemEnd != 0 && _lastItemSequence == sequence - 1 ? _lastItemEnd : Timestamp();
            _lastItemEnd = 0;
            if ((paths & SlowPaths.WaitHistogram) != 0 && item.EnqueuedAt != 0)
            {
                PriorityMetrics.RecordWait(this, level, start - item.EnqueuedAt);
            }
        }

        long end = ObservedInvoke.Run(this, paths, in item, level, start, thread: -1); // an exception skips the two lines below: the
        _lastItemEnd = end;                                                             // loop's handler clears _lastItemEnd anyway
        _lastItemSequence = sequence;
    }
}
