using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The diagnostics side of the pool: what the metrics, the EventSource and the trace recorder read, and the threads' slow path.
//
// Cost model: the single loop's (Diagnostics/PriorityContext.Diagnostics.cs). Each thread reads _slowPaths once per item, Enqueue once
// per post; with no listener it is 0 and nothing else happens. The counters behind the observable instruments (each thread's
// own run counts, the running counts: _running under the dispatch lock in locked mode, each thread's accounted level in lock-free
// mode, and the queue counts) are kept anyway and read without a lock (a moment's look) only when a listener collects. ContextRegistry sets _slowPaths; it is a hint, read once per item: a listener that turns on takes effect from a thread's
// next item.
//
// What differs from the single loop: a timed item costs two clock reads (the loop reuses the previous item's end as the next start
// when they ran back to back; on the pool the dequeue between them is under a shared lock whose wait would be charged to the item);
// the trace recorder's slices go on one track per thread (items of one level overlap in time on N threads, and slices of one track
// must nest); and the running gauge (priorityasync.work_item.running) exists only here.
public sealed partial class PriorityThreadPool : IObservedScheduler
{
    // Bits of SlowPaths. Written by ContextRegistry (any thread), read by the threads and by posters.
    private int _slowPaths;

    // The inspector's state while a session inspects (Diagnostics/InspectorSampler.cs); null otherwise.
    private InspectorState? _inspection;

    string IObservedScheduler.Kind => nameof(PriorityThreadPool);

    long IObservedScheduler.TimestampFrequency => Stopwatch.Frequency;

    long IObservedScheduler.Timestamp() => Stopwatch.GetTimestamp();

    long IObservedScheduler.GetRun(int level)
    {
        long run = 0;
        foreach (PoolWorker worker in _workers)
        {
            run += worker.RunCount(level); // each thread counts its own items (D-N): the sum is the pool's
        }

        return run;
    }

    int IObservedScheduler.GetQueued(int level) => _queues.Count(level);

    int IObservedScheduler.GetRunning(int level)
    {
        if (!_lockFree)
        {
            return Volatile.Read(ref _running[level]); // locked mode keeps the count for the caps (K-N)
        }

        // Lock-free mode keeps no shared count (it would be a shared write per item): each thread's accounted level is its item's
        // dequeue level while it runs one, and -1 once it goes idle. A moment's look, as every observable instrument is.
        int running = 0;
        foreach (PoolWorker worker in _workers)
        {
            if (worker.AccountedLevel == level)
            {
                running++;
            }
        }

        return running;
    }

    void IObservedScheduler.SetSlowPaths(int paths) => Volatile.Write(ref _slowPaths, paths);

    void IObservedScheduler.ArmInspectOne() => Interlocked.Or(ref _slowPaths, SlowPaths.InspectOne);

    void IObservedScheduler.StopInspectingAll() => ContextRegistry.Refresh(this); // the state says "sampled" now: the bits follow

    int IObservedScheduler.InspectorId { get; set; }

    InspectorState? IObservedScheduler.Inspection
    {
        get => Volatile.Read(ref _inspection);
        set => Volatile.Write(ref _inspection, value);
    }

    int IObservedScheduler.Threads => ThreadCount;

    long IObservedScheduler.ThreadDispatchCount(int thread) => Worker(thread)?.DispatchCount ?? 0;

    bool IObservedScheduler.IsThreadParked(int thread) => Worker(thread) is not { } worker || Volatile.Read(ref worker.Parked) != 0;

    Thread? IObservedScheduler.GetThread(int thread) => Worker(thread)?.Thread;

    string IObservedScheduler.PolicyName => Policy.ToString() ?? string.Empty;

    TimeSpan? IObservedScheduler.TimeSliceSetting => TimeSlice;

    TimeSpan? IObservedScheduler.StallTimeoutSetting
    {
        get
        {
            Watchdog?[] watchdogs = _watchdogs;
            return watchdogs.Length > 0 && watchdogs[0] is { } watchdog ? watchdog.Timeout : null;
        }
    }

    int IObservedScheduler.ArmedTimers => _loopTimers.ArmedCount;

    private PoolWorker? Worker(int thread)
    {
        PoolWorker[] workers = Volatile.Read(ref _workers);
        return (uint)thread < (uint)workers.Length ? workers[thread] : null;
    }

    /// <summary>For Enqueue: whether items must carry their enqueue time (the aging policy, or the queue-wait histogram).</summary>
    private bool StampsEnqueueTime => ((_slowPaths | _stampAlways) & SlowPaths.WaitTime) != 0;

    /// <summary>Runs one dequeued item on <paramref name="worker"/>'s thread: one field read, then the item, unless a listener asks for more.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Invoke(PoolWorker worker, in WorkItem item, int level)
    {
        if (_slowPaths == SlowPaths.None)
        {
            item.Invoke();
        }
        else
        {
            InvokeObserved(worker, in item, level);
        }
    }

    /// <summary>The threads' slow path: runs <paramref name="item"/> with whatever _slowPaths asks for around it.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void InvokeObserved(PoolWorker worker, in WorkItem item, int level)
    {
        int paths = _slowPaths;
        if ((paths & SlowPaths.InspectOne) != 0)
        {
            // The period's one sample: the thread whose AND cleared the bit takes it; the others run their item plainly.
            paths = (Interlocked.And(ref _slowPaths, ~SlowPaths.InspectOne) & SlowPaths.InspectOne) != 0 ? paths : paths & ~SlowPaths.InspectOne;
        }

        if ((paths & ~SlowPaths.WaitTime) == 0)
        {
            item.Invoke();
            return;
        }

        long start = 0;
        if ((paths & SlowPaths.Timed) != 0)
        {
            start = Stopwatch.GetTimestamp();
            if ((paths & SlowPaths.WaitHistogram) != 0 && item.EnqueuedAt != 0)
            {
                PriorityMetrics.RecordWait(this, level, start - item.EnqueuedAt);
            }
        }

        ObservedInvoke.Run(this, paths, in item, level, start, worker.Index);
    }
}
