using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// What the metrics, the event source, the trace recorder and the watchdog read, and the per-item slow path ([O-SLOW]).
public abstract partial class PriorityScheduler
{
    // A test clock for stamps, policies and timings (internal option), else Stopwatch.
    private readonly TimeProvider? _clock;

    // Null: no watchdog (PrioritySchedulerOptions.StallTimeout).
    private readonly TimeSpan? _stallTimeout;
    private Watchdog?[] _watchdogs = [];

    // Bits of SlowPaths ([O-SLOW]). Written by ContextRegistry (any thread), read once per item and once per post: a hint.
    internal int _slowPaths;

    // The inspector's state while a session inspects; null otherwise.
    private InspectorState? _inspection;

    // Escalations begun ([X-SEEN]); written under the escalation graph's lock, read anywhere.
    private long _escalations;

    /// <summary>
    /// Raised on the process-wide watchdog thread (never the thread pool) when a thread of the scheduler has started no item for
    /// <see cref="PrioritySchedulerOptions.StallTimeout"/> while work was waiting, typically because the running item blocks (a
    /// sync-over-async <c>task.Wait()</c> or <c>.Result</c> on work, a loop timer or a <see cref="Priority.Delay"/> that only this
    /// scheduler can run). Once per stall, while it lasts; each thread of a pool is watched on its own.
    /// </summary>
    /// <remarks>
    /// <para>On by default (<see cref="PrioritySchedulerOptions.DefaultStallTimeout"/>, 10 seconds); a
    /// <see cref="PrioritySchedulerOptions.StallTimeout"/> of <see langword="null"/> turns it off. Each stall is also recorded on the
    /// <c>PriorityAsync</c> meter (<c>priorityasync.stalls</c>, <c>priorityasync.stall.waiting_time</c>) and event source
    /// (<c>StallDetected</c>). A stall that no handler observes is written to standard error, one line per stall, so that a hang is
    /// never silent.</para>
    /// <para>The scheduler is not interrupted: a watchdog reports, it cannot unblock. Handlers run one at a time on the watchdog thread;
    /// an exception thrown by a handler is unhandled and ends the process.</para>
    /// </remarks>
    public event EventHandler<StallDetectedEventArgs>? StallDetected;

    /// <summary>The clock's frequency, ticks per second.</summary>
    internal long TimestampFrequency => _clock?.TimestampFrequency ?? Stopwatch.Frequency;

    internal long Timestamp() => _clock?.GetTimestamp() ?? Stopwatch.GetTimestamp();

    /// <summary>How many times work of this scheduler was raised above its own level ([X-SEEN]).</summary>
    internal long EscalationCount => Interlocked.Read(ref _escalations);

    /// <summary>Counts the start of an escalation (graph lock).</summary>
    internal void CountEscalation() => Interlocked.Increment(ref _escalations);

    /// <summary>Items started at <paramref name="level"/>, summed over the threads. Any thread.</summary>
    internal long GetRun(int level)
    {
        long run = 0;
        foreach (SchedulerThread thread in _threads)
        {
            run += thread.RunCount(level);
        }

        return run;
    }

    /// <summary>Items queued at <paramref name="level"/> and not yet started (a moment's count).</summary>
    internal int GetQueued(int level) => _queues.Count(level);

    /// <summary>Items of <paramref name="level"/> running now, or -1 when the scheduler does not count them (the loop runs one at
    /// most: the running gauge is the pool's).</summary>
    internal virtual int GetRunning(int level) => -1;

    internal void SetSlowPaths(int paths) => Volatile.Write(ref _slowPaths, paths);

    /// <summary>The inspector: sets <see cref="SlowPaths.InspectOne"/> (interlocked: the thread that takes it clears it).</summary>
    internal void ArmInspectOne() => Interlocked.Or(ref _slowPaths, SlowPaths.InspectOne);

    /// <summary>The inspector fell back to sampling (its budget for the period is spent): the slow paths follow its state.</summary>
    internal void StopInspectingAll() => ContextRegistry.Refresh(this);

    /// <summary>The scheduler's id in this process, given by the registry; the inspector's events carry it (names need not be unique).</summary>
    internal int InspectorId { get; set; }

    /// <summary>The inspector's state while a session inspects; null otherwise.</summary>
    internal InspectorState? Inspection
    {
        get => Volatile.Read(ref _inspection);
        set => Volatile.Write(ref _inspection, value);
    }

    /// <summary>Items thread <paramref name="thread"/> has started (any thread, a moment's value).</summary>
    internal long ThreadDispatchCount(int thread) => _threads[thread].DispatchCount;

    /// <summary>Whether thread <paramref name="thread"/> is idle: parked, or the scheduler is not running.</summary>
    internal bool IsThreadParked(int thread) =>
        Volatile.Read(ref _threads[thread].Parked) != 0 || Volatile.Read(ref _state) != StateRunning;

    /// <summary>Thread <paramref name="thread"/>, or null before it started.</summary>
    internal Thread? GetThread(int thread) => _threads[thread].Thread;

    /// <summary>Any thread ([O-RUNNING]): the item thread <paramref name="thread"/> runs, from its own record; false when it runs none.</summary>
    internal bool TryReadRunning(int thread, out SendOrPostCallback callback, out object? state, out int level, out long dispatched) =>
        _threads[thread].TryReadRunning(out callback, out state, out level, out dispatched);

    /// <summary>Any thread ([O-RUNNING]): the Stopwatch timestamp of the stall watchdog's first check that saw thread
    /// <paramref name="thread"/> at dispatch count <paramref name="dispatched"/> (its item started before it), or 0.</summary>
    internal long WatchdogSeenAt(int thread, long dispatched) =>
        (uint)thread < (uint)_watchdogs.Length && _watchdogs[thread] is { } watchdog ? watchdog.SeenAt(dispatched) : 0;

    /// <summary>Any thread: the Stopwatch timestamp since which thread <paramref name="thread"/> has been stalled, when its watchdog
    /// reported a stall that still lasts; else 0.</summary>
    internal long StalledSince(int thread) =>
        (uint)thread < (uint)_watchdogs.Length && _watchdogs[thread] is { } watchdog ? watchdog.StalledSince() : 0;

    /// <summary>The stall timeout, or null when off.</summary>
    internal TimeSpan? StallTimeout => _stallTimeout;

    /// <summary>The slow path of a thread's dispatch: runs <paramref name="item"/> with whatever _slowPaths asks for around it.</summary>
    /// <param name="thread">The thread running it.</param>
    /// <param name="item">The item.</param>
    /// <param name="level">Its level.</param>
    /// <param name="reuseLastEnd">Whether the previous item's end, when it ran just before on this thread, is this one's start (one
    /// clock read per item instead of two; the loop, whose dequeue takes no lock that a wait could be charged to the item).</param>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private protected void InvokeObserved(SchedulerThread thread, in WorkItem item, int level, bool reuseLastEnd)
    {
        int paths = _slowPaths;
        if ((paths & SlowPaths.InspectOne) != 0)
        {
            // The period's one sample: the thread whose And cleared the bit takes it (a refresh may have cleared it first: no sample).
            paths = (Interlocked.And(ref _slowPaths, ~SlowPaths.InspectOne) & SlowPaths.InspectOne) != 0 ? paths : paths & ~SlowPaths.InspectOne;
        }

        if ((paths & ~SlowPaths.WaitTime) == 0)
        {
            item.Invoke(); // only the stamps were asked for (they are taken at the post)
            return;
        }

        long start = 0;
        long sequence = 0;
        if ((paths & SlowPaths.Timed) != 0)
        {
            sequence = thread.DispatchCount; // includes this item
            start = reuseLastEnd && thread.LastItemEnd != 0 && thread.LastItemSequence == sequence - 1 ? thread.LastItemEnd : Timestamp();
            thread.LastItemEnd = 0; // an exception skips the two writes at the end: the next item reads the clock
            if ((paths & SlowPaths.WaitHistogram) != 0 && item.EnqueuedAt != 0)
            {
                PriorityMetrics.RecordWait(this, level, start - item.EnqueuedAt);
            }
        }

        PriorityEventSource? events = (paths & SlowPaths.EventSource) != 0 ? PriorityEventSource.Log : null;
        InspectorState? inspection = (paths & SlowPaths.Inspect) != 0 ? Inspection : null;
        string? name = events is null && inspection is null ? null : CallbackNames.Describe(item.Callback, item.State);
        events?.WorkItemStart(Name, level, name!);
        inspection?.Begin(thread.Index, level, name!, start);
        long end = 0;
        try
        {
            item.Invoke();
        }
        finally
        {
            events?.WorkItemStop(Name, level);
            if ((paths & SlowPaths.Timed) != 0)
            {
                end = Timestamp();
                if ((paths & SlowPaths.RunTime) != 0)
                {
                    PriorityMetrics.RecordRun(this, level, end - start);
                }

                if ((paths & SlowPaths.Recorder) != 0)
                {
                    PriorityTraceRecorder.Active?.Record(this, _isLoop ? -1 : thread.Index, level, item.Callback, item.State, start, end);
                }

                if (inspection is not null)
                {
                    inspection.End(thread.Index);
                    if ((paths & SlowPaths.InspectAll) != 0 && !inspection.CountObserved())
                    {
                        StopInspectingAll(); // the period's budget is spent: one sample per period from now on
                    }

                    InspectorSampler.ReportItem(this, inspection, thread.Index, level, name!, in item, start, end, sampled: (paths & SlowPaths.InspectAll) == 0);
                }
            }
        }

        thread.LastItemEnd = end;
        thread.LastItemSequence = sequence;
    }

    /// <summary>As the scheduler starts running: the registry ([O-SLOW]), its threads' watchdogs ([O-STALL]) and the slice clock watch it.</summary>
    private protected void StartWatching()
    {
        if (_stallTimeout is { } timeout)
        {
            var watchdogs = new Watchdog?[_threads.Length];
            for (int i = 0; i < _threads.Length; i++)
            {
                watchdogs[i] = Watchdog.Start(_threads[i], timeout);
            }

            Volatile.Write(ref _watchdogs, watchdogs); // read by WatchdogOf from other threads
        }

        ContextRegistry.Register(this);
        if (_timeSliceWatched)
        {
            SliceClock.Shared.Register(this);
        }
    }

    /// <summary>For tests: the stall watchdog of thread <paramref name="thread"/>, or <see langword="null"/> when the scheduler has none
    /// (no <see cref="PrioritySchedulerOptions.StallTimeout"/>) or has not started running yet.</summary>
    internal Watchdog? WatchdogOf(int thread)
    {
        Watchdog?[] watchdogs = Volatile.Read(ref _watchdogs);
        return thread < watchdogs.Length ? watchdogs[thread] : null;
    }

    /// <summary>As the scheduler ends (or a pool fails to start).</summary>
    private protected void StopWatching()
    {
        foreach (SchedulerThread thread in _threads)
        {
            thread.ClearRunning(); // every thread has left its loop: a finished scheduler keeps no item alive ([O-RUNNING])
        }

        foreach (Watchdog? watchdog in _watchdogs)
        {
            watchdog?.Dispose();
        }

        ContextRegistry.Unregister(this);
        if (_timeSliceWatched)
        {
            SliceClock.Shared.Unregister(this);
        }
    }

    /// <summary>A watchdog found <paramref name="thread"/> stalled: the report goes to the handlers, the meter and the event source.</summary>
    internal void OnStallDetected(SchedulerThread thread, StallDetectedEventArgs report) =>
        StallReport.Raise(this, StallDetected, report, _isLoop ? "the loop" : $"thread {thread}", thread.Index);
}
