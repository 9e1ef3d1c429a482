using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A priority scheduler with N dedicated threads sharing the level queues: at every dequeue, on any of its threads, the oldest item of
/// the highest level that may run is taken (or the policy's choice). The multi-threaded sibling of <see cref="PriorityContext"/>:
/// the same levels, policies, timers, <see cref="Priority"/> API and diagnostics, on several cores.
/// </summary>
/// <remarks>
/// <para>Thread safety: every member may be called from any thread. Up to <see cref="ThreadCount"/> callbacks run at once, so the code
/// you run here must be thread-safe (on a <see cref="PriorityContext"/> it need not be).</para>
/// <para>Ordering: strict priority holds at each dequeue (no thread takes an item while an item of a higher level it may run waits);
/// within a level, items are dequeued in the order they were queued (for one producer, in its program order). Items dequeued one after
/// the other may still run at the same time on two threads, so "dequeued first" is not "finished first".</para>
/// <para>The pool runs from its creation until <see cref="Complete"/> or disposal and all work it queued are done.</para>
/// </remarks>
public sealed partial class PriorityThreadPool : PriorityScheduler, IAsyncDisposable, IDisposable
{
    private readonly int _idleSpinCount;
    private readonly object _dispatchLock = new();
    private readonly object _idleLock = new();
    private readonly object _observerLock = new(); // tests only: DequeueObserver in lock-free mode
    private readonly SchedulerThread[] _idleStack;
    private readonly bool _lockFree; // [D-POOL]: the strict policy and no cap: dequeue without _dispatchLock
    private int _idleTop; // under _idleLock
    private volatile int _idleCount; // = _idleTop, read by producers after their fence ([P-POOL])
    private int _runningTotal; // under _dispatchLock; locked mode: items running; lock-free mode: active threads ([E-POOL])
    private int _spinning; // threads in SpinForWork ([P-SPIN]); interlocked
    private int _liveThreads;

    /// <summary>Creates the pool and starts its threads.</summary>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is outside its allowed range.</exception>
    /// <exception cref="OutOfMemoryException">The operating system refused to start one of the threads (a process or container
    /// thread limit). The threads already started end, and nothing of the pool is left running or observed.</exception>
    public PriorityThreadPool(PriorityThreadPoolOptions? options = null)
        : base(options ??= new PriorityThreadPoolOptions(), options.ThreadCount, isLoop: false, virtualClock: null)
    {
        _idleSpinCount = options.IdleSpinCount;
        _idleStack = new SchedulerThread[ThreadCount];
        _running = new int[Levels];
        _maxConcurrency = new int[Levels];
        for (int level = 0; level < Levels; level++)
        {
            _maxConcurrency[level] = options.MaxConcurrencyPerLevel?[level] ?? ThreadCount;
            _capped |= _maxConcurrency[level] < ThreadCount;
        }

        _lockFree = !_capped && PolicyKind == PolicyKind.Strict;
        if (options.DequeueHooksForTests is { } hooks)
        {
            DequeueObserver = hooks.Observer;
            DequeueStarting = hooks.Starting;
        }

        Start(); // [E-LIFE]: running from its creation; the owner's hold is the pool's own, released by Complete
        StartThreads(options.ThreadStartingForTests);
    }

    /// <summary>Gets the pool the calling code runs in, or <see langword="null"/>.</summary>
    public static PriorityThreadPool? Current => (SynchronizationContext.Current as PrioritySynchronizationContext)?.Scheduler as PriorityThreadPool;

    /// <summary>Gets the number of threads.</summary>
    public int ThreadCount => _threads.Length;

    /// <summary>For tests: called under the dispatch lock with the level and state of every item dequeued, in dequeue order.</summary>
    internal Action<int, object?>? DequeueObserver { get; set; }

    /// <summary>For tests, set together with <see cref="DequeueObserver"/>: called as each dequeue begins, in the same critical section
    /// as the observer's call for the item it takes.</summary>
    internal Action? DequeueStarting { get; set; }

    /// <summary>For tests: how many threads are parked (or about to park).</summary>
    internal int IdleCount => _idleCount;

    /// <summary>Lets the pool stop once all queued work and all outstanding operations are done. Idempotent; never blocks.</summary>
    public void Complete() => ReleaseOwnerHold();

    /// <summary>Completes the pool and waits for its threads to stop (queued work runs first). Rethrows the fault that stopped it, if any.</summary>
    /// <returns>A task that completes when the threads have stopped.</returns>
    /// <remarks>Called from one of the pool's own threads it only completes, and returns a completed task: the pool cannot wait for
    /// itself. That holds whatever the thread runs: an item, or a handler the pool raises there, also as its last thread ends.</remarks>
    public ValueTask DisposeAsync() => CompleteAndWaitAsync();

    /// <summary>Completes the pool and blocks until its threads have stopped. Rethrows the fault that stopped it, if any.</summary>
    /// <remarks>Called from one of the pool's own threads it only completes, whatever the thread runs: the pool cannot wait for itself.</remarks>
    public void Dispose() => CompleteAndWait();

    internal override int GetRunning(int level)
    {
        if (!_lockFree)
        {
            return Volatile.Read(ref _running[level]); // locked mode keeps the count for the caps
        }

        // Lock-free mode keeps no shared count (it would be a shared write per item): each thread's accounted level is its item's
        // level while it runs one. A moment's look, as every observable instrument is.
        int running = 0;
        foreach (SchedulerThread thread in _threads)
        {
            if (thread.AccountedLevel == level)
            {
                running++;
            }
        }

        return running;
    }

    // ---- Start ------------------------------------------------------------------------------------------------------------------

    private void StartThreads(Action<PriorityThreadPool, int>? threadStartingForTests)
    {
        _liveThreads = ThreadCount;
        int started = 0;
        try
        {
            for (; started < ThreadCount; started++)
            {
                SchedulerThread worker = _threads[started];
                var thread = new Thread(static state => ((PriorityThreadPool)((SchedulerThread)state!).Scheduler).WorkerMain((SchedulerThread)state!))
                {
                    IsBackground = true,
                    Name = $"{Name} #{started}",
                };
                threadStartingForTests?.Invoke(this, started);
                thread.UnsafeStart(worker); // in the default context, as a thread-pool thread ([E-FLOW]), not in the creator's
            }
        }
        catch (Exception ex)
        {
            AbandonStart(started, ex);
            throw;
        }
    }

    /// <summary>The constructor failed to start thread <paramref name="started"/>: the threads already started must leave and the
    /// pool must stop being watched. The unstarted threads are taken off _liveThreads; then this thread sets the fault, whose wake-up
    /// makes every started thread leave, and publishes the end ([E-POOL]: no item runs, so no thread would find it); with none started,
    /// this thread ends the pool ([E-END]). No item can be queued yet: the constructor has not returned.</summary>
    private void AbandonStart(int started, Exception failure)
    {
        int live = Interlocked.Add(ref _liveThreads, started - ThreadCount);
        SetFault(ExceptionDispatchInfo.Capture(failure));
        PublishEnd();
        if (live == 0)
        {
            End();
        }
    }

    // ---- The threads ([D-POOL]) ----------------------------------------------------------------------------------------------------

    private void WorkerMain(SchedulerThread worker)
    {
        worker.Bind();
        try
        {
            switch (PolicyKind)
            {
                case PolicyKind.Aging:
                    RunWorker(worker, AgingView);
                    break;
                case PolicyKind.WeightedShares:
                    RunWorker(worker, SharesView);
                    break;
                default:
                    RunWorker(worker, default(StrictPriorityPolicy));
                    break;
            }
        }
        finally
        {
            worker.AccountedLevel = -1;
            SynchronizationContext.SetSynchronizationContext(null);
            ExecutionContextFlow.Enter(null);
            SchedulerThread.Unbind();
            if (Interlocked.Decrement(ref _liveThreads) == 0)
            {
                End(); // [E-POOL]: the last thread to leave ends the pool ([E-END]); the outcome is in Completion
            }
        }
    }

    private void RunWorker<TPolicy>(SchedulerThread worker, TPolicy policy)
        where TPolicy : struct, IDispatchPolicy
    {
        while (Activate())
        {
            while (true)
            {
                if (Volatile.Read(ref _timersDue) != 0)
                {
                    FireDueTimers();
                }

                if (_lockFree ? TryTakeLockFree(worker, out WorkItem item, out int level) : TryTakeLocked(worker, policy, out item, out level))
                {
                    Dispatch(worker, in item, level);
                    continue;
                }

                // Nothing this thread may run now: spin a little ([P-SPIN]), then go idle. In lock-free mode nothing else ends the
                // item's accounting, and the running gauge must not count a spinning thread.
                if (_lockFree)
                {
                    worker.AccountedLevel = -1;
                }

                if (!SpinForWork())
                {
                    break;
                }
            }

            // [O-RUNNING]: idle, it runs nothing and keeps nothing alive. Not before the spin: a thread fed by a producer finds work
            // there again and again, and each clear costs the next item the record's reference writes.
            worker.ClearRunning();
            if (!Deactivate(worker))
            {
                break;
            }

            Park(worker);
        }

        WakeAll(); // every thread leaves its loop; the last one drops what is left ([E-POOL])
    }

    /// <summary>Runs one dequeued item on this thread: the per-item path, the same in both dispatch modes.</summary>
    private void Dispatch(SchedulerThread worker, in WorkItem item, int level)
    {
        worker.RecordRunning(in item, level); // [O-RUNNING]
        SchedulerThread.CountDispatch(worker.Counters, level);

        // [P-WORK]: more runnable work, a parked thread and none spinning: wake one. The queues are looked at, not only the mask:
        // the level just dequeued keeps its possibly stale bit, which must not wake a thread for nothing.
        if (_idleCount != 0 && Volatile.Read(ref _spinning) == 0 && HasRunnableWorkAbove(-1))
        {
            WakeOne();
        }

        if (!ReferenceEquals(SynchronizationContext.Current, _syncContexts[level]))
        {
            SynchronizationContext.SetSynchronizationContext(_syncContexts[level]); // only when it changes: the write pays a barrier
        }

        try
        {
            if (_slowPaths == SlowPaths.None) // one field read per item; every per-item diagnostic is behind it ([O-SLOW])
            {
                item.Invoke();
            }
            else
            {
                InvokeObserved(worker, in item, level, reuseLastEnd: false);
            }
        }
        catch (Exception ex)
        {
            OnUnhandledException(ex, level);
        }
    }

    /// <summary>[D-POOL], lock-free mode: the oldest item of the highest level that holds work, without the dispatch lock
    /// ([M-SHARED]). The caller is active, so the end cannot be found while it holds an item.</summary>
    private bool TryTakeLockFree(SchedulerThread worker, out WorkItem item, out int level)
    {
        if (Volatile.Read(ref _fault) is not null || Volatile.Read(ref _state) != StateRunning)
        {
            item = default;
            level = -1;
            return false; // no dequeue starts after a fault is seen (check-then-act: one begun just before may still take an item)
        }

        bool got;
        if (DequeueObserver is { } observer)
        {
            // Tests only: the dequeue and its observation in one critical section, so the observed order is the dequeue order.
            lock (_observerLock)
            {
                DequeueStarting?.Invoke();
                got = _queues.TryDequeueHighestShared(out item, out level);
                if (got)
                {
                    observer(level, item.State);
                }
            }
        }
        else
        {
            got = _queues.TryDequeueHighestShared(out item, out level);
        }

        if (got)
        {
            worker.AccountedLevel = level;
        }

        return got;
    }

    /// <summary>[D-POOL], locked mode (caps, aging, weighted shares): under the dispatch lock, the end of the previous item and the
    /// dequeue of the next share one acquisition.</summary>
    private bool TryTakeLocked<TPolicy>(SchedulerThread worker, TPolicy policy, out WorkItem item, out int level)
        where TPolicy : struct, IDispatchPolicy
    {
        lock (_dispatchLock)
        {
            EndItemLocked(worker);
            DequeueStarting?.Invoke(); // tests only

            if (_fault is not null || Volatile.Read(ref _state) != StateRunning || !policy.TryDequeue(_queues, ~(ulong)_saturated, out item, out level))
            {
                item = default;
                level = -1;
                return false;
            }

            TakeSlotLocked(level);
            _runningTotal++;
            worker.AccountedLevel = level;
            DequeueObserver?.Invoke(level, item.State); // tests only
            if (SharesDispatch is { } shares)
            {
                worker.ItemStart = shares.Now();
            }

            return true;
        }
    }

    /// <summary>Under the lock: the item this worker ran has ended: release its level's slot and charge its time ([W-SHARES]).</summary>
    private void EndItemLocked(SchedulerThread worker)
    {
        int level = worker.AccountedLevel;
        if (level < 0)
        {
            return;
        }

        worker.AccountedLevel = -1;
        _runningTotal--;
        ReleaseSlotLocked(level); // [P-WORK] follows in Dispatch if this thread takes an item; if it takes none, nothing is runnable

        if (SharesDispatch is { } shares)
        {
            shares.Charge(level, shares.Now() - worker.ItemStart);
        }
    }

    /// <summary>[E-POOL]: a thread that starts (or leaves Park) becomes active: in lock-free mode under the lock, counted in
    /// _runningTotal, unless the pool has ended or faulted.</summary>
    private bool Activate()
    {
        if (!_lockFree)
        {
            return Volatile.Read(ref _state) == StateRunning;
        }

        lock (_dispatchLock)
        {
            if (_fault is not null || Volatile.Read(ref _state) != StateRunning)
            {
                return false;
            }

            _runningTotal++;
            return true;
        }
    }

    /// <summary>[E-POOL]: a thread that found nothing goes idle: under the lock it stops counting as active (lock-free mode) and checks
    /// the end. False: the pool has ended (this thread may be the one that found it); the thread leaves its loop.</summary>
    private bool Deactivate(SchedulerThread worker)
    {
        lock (_dispatchLock)
        {
            if (_lockFree)
            {
                worker.AccountedLevel = -1;
                _runningTotal--;
            }

            if (Volatile.Read(ref _state) != StateRunning)
            {
                return false;
            }

            if (MustEnd(nothingRuns: _runningTotal == 0)) // this thread is the consumer for its look at the queues
            {
                PublishEnd();
                return false;
            }

            return true;
        }
    }

    /// <summary>[P-SPIN]: a thread that found nothing spins up to IdleSpinCount laps, counted in _spinning, until work it may run
    /// appears. False: nothing came (or the pool is ending): the caller goes idle and parks.</summary>
    private bool SpinForWork()
    {
        Interlocked.Increment(ref _spinning);
        bool found = false;
        for (int i = 0; i < _idleSpinCount; i++)
        {
            if (Volatile.Read(ref _state) != StateRunning || Volatile.Read(ref _fault) is not null || Volatile.Read(ref _outstanding) <= 0)
            {
                break; // the end or a fault: Deactivate decides, under the lock
            }

            if ((_queues.NonEmptyMask & ~(ulong)Volatile.Read(ref _saturated)) != 0 || Volatile.Read(ref _timersDue) != 0)
            {
                found = true;
                break;
            }

            // Every fourth lap gives the core away if another thread waits for one: with more runnable threads than cores, a lap
            // that only spun would keep the producer it waits for off the core.
            if ((i & 3) == 3)
            {
                Thread.Yield();
            }
            else
            {
                Thread.SpinWait(20);
            }
        }

        // A full fence before the caller's next look at the queues: a producer that read _spinning != 0 and woke nobody is covered.
        Interlocked.Decrement(ref _spinning);
        return found;
    }

    private void Park(SchedulerThread worker)
    {
        ExecutionContextFlow.Enter(null); // idle in the default context: what the last item left is not kept alive ([E-FLOW])
        SynchronizationContext.SetSynchronizationContext(null);
        bool firstToPark;
        worker.Event.Reset();
        lock (_idleLock)
        {
            firstToPark = _idleTop == 0;
            _idleStack[_idleTop++] = worker;
            worker.InIdleStack = true;
            _idleCount = _idleTop;
        }

        Interlocked.Exchange(ref worker.Parked, 1); // a full fence before the re-check ([P-POOL])
        if (!HasRunnableWorkOrShouldStop())
        {
            // Only the first thread to park waits for the earliest timer ([T-PARK]): N threads do not all wake for one timer.
            if (!worker.Event.Wait(firstToPark ? ParkTimeoutMilliseconds() : Timeout.Infinite))
            {
                OnParkTimedOut();
            }
        }

        Interlocked.Exchange(ref worker.Parked, 0); // a full fence before the watchdog's flag is read ([O-STALL])
        WatchdogThread.Awake(worker);
        ContextRegistry.RefreshIfListenersChanged(); // a histogram a listener enabled while it slept is seen as it wakes ([O-SLOW])
        lock (_idleLock)
        {
            if (worker.InIdleStack)
            {
                // Not popped by a producer: take ourselves out (move the top into the hole; the order is only a preference).
                int index = Array.IndexOf(_idleStack, worker, 0, _idleTop);
                _idleStack[index] = _idleStack[--_idleTop];
                _idleStack[_idleTop] = null!;
                worker.InIdleStack = false;
                _idleCount = _idleTop;
            }
        }
    }

    // "Nothing outstanding and nothing running": with only the first, idle threads would spin while another runs a long last item.
    private bool HasRunnableWorkOrShouldStop() =>
        (_queues.NonEmptyMask & ~(ulong)Volatile.Read(ref _saturated)) != 0
        || Volatile.Read(ref _timersDue) != 0
        || (Volatile.Read(ref _outstanding) <= 0 && Volatile.Read(ref _runningTotal) == 0)
        || Volatile.Read(ref _state) != StateRunning
        || Volatile.Read(ref _fault) is not null;

    // ---- Waking ([P-POOL], [P-SPIN]) -----------------------------------------------------------------------------------------------

    /// <summary>A post, a timer's flag, the release of the last operation (and a post from a pool thread too: that thread is busy with
    /// its own item).</summary>
    private protected override void WakeForWork() => WakeOne();

    /// <summary>Wakes one parked thread, if any and if no thread is spinning (a spinner sees the work before it parks).</summary>
    private void WakeOne()
    {
        if (_idleCount == 0 || Volatile.Read(ref _spinning) != 0)
        {
            return;
        }

        PopAndWake();
    }

    /// <summary>Pops one parked thread and sets its event; false if none was parked.</summary>
    private bool PopAndWake()
    {
        SchedulerThread worker;
        lock (_idleLock)
        {
            if (_idleTop == 0)
            {
                return false;
            }

            worker = _idleStack[--_idleTop];
            _idleStack[_idleTop] = null!;
            worker.InIdleStack = false;
            _idleCount = _idleTop;
        }

        CountWake();
        worker.Event.Set();
        return true;
    }

    /// <summary>The end or a fault: every parked thread, spinning or not (each must see the state itself).</summary>
    private void WakeAll()
    {
        while (_idleCount != 0 && PopAndWake())
        {
        }
    }

    private protected override void OnFaulted() => WakeAll(); // parked threads see the fault and leave ([F-FAULT], [E-POOL])

    // ---- Inline decisions -----------------------------------------------------------------------------------------------------------

    /// <summary>[A-INLINE]: whether code on one of this pool's threads may go on at <paramref name="level"/> at once, as far as priority
    /// goes: the pool runs and nothing this thread may run waits above. Fires due timers first, so a due timer above runs first.</summary>
    private bool MayGoOnAt(int level, [NotNullWhen(true)] out SchedulerThread? worker)
    {
        worker = SchedulerThread.Current;
        if (worker is null || worker.Scheduler != this || Volatile.Read(ref _state) != StateRunning)
        {
            return false;
        }

        FireDueTimers();
        return !HasRunnableWorkAbove(level);
    }

    /// <summary>A moment's look (no lock): a level above <paramref name="level"/> (-1: any level), below its cap, holds an item. Stale
    /// bits are skipped by looking at the queue; nothing is cleared (only a dequeuing thread clears bits). [M-SHARED]'s window is left
    /// open here on purpose: the item hidden by a clear already has a taker.</summary>
    private bool HasRunnableWorkAbove(int level)
    {
        ulong above = _queues.NonEmptyMask & ~(ulong)Volatile.Read(ref _saturated) & (level < 0 ? ~0UL : ~0UL << level << 1);
        while (above != 0)
        {
            int candidate = LevelQueues.HighestLevel(above);
            if (!_queues.IsEmpty(candidate))
            {
                return true;
            }

            above &= ~(1UL << candidate);
        }

        return false;
    }

    /// <summary>The inline end of an <c>await Prioritize</c> on a pool thread ([A-INLINE]): the method goes on in <paramref name="flow"/>
    /// or the level's own context, at its effective level, for good, so its slot moves there ([K-SLOTS]). Never after a fault: GetResult
    /// then throws ([F-STOP]).</summary>
    internal override bool TryContinueInlineAt(int level, FlowContext? flow)
    {
        int effective = flow is null ? level : flow.EffectiveLevel; // level code's effective level is its level ([X-FLOW])
        if (Volatile.Read(ref _fault) is not null || !MayGoOnAt(effective, out SchedulerThread? worker))
        {
            return false;
        }

        if (_capped && worker.AccountedLevel != effective && worker.AccountedLevel >= 0 && !TryMoveAccountedLevel(worker, effective))
        {
            return false; // queued instead: it runs when the level has room
        }

        PrioritySynchronizationContext target = flow ?? _syncContexts[level];
        if (!ReferenceEquals(SynchronizationContext.Current, target))
        {
            SynchronizationContext.SetSynchronizationContext(target);
        }

        return true;
    }

    /// <summary>The checkpoint decision: off the pool's threads always queue (hop on), unless the pool has stopped; on them, yield when
    /// work this thread may run waits above, or when this thread's item has used up its quota and its yield is what lets waiting work
    /// run ([SLICE-FLAG]).</summary>
    internal override bool ShouldYieldAt(int level)
    {
        SchedulerThread? worker = SchedulerThread.Current;
        if (worker is null || worker.Scheduler != this)
        {
            return !HasStopped;
        }

        FireDueTimers();
        return HasRunnableWorkAbove(level) || QuotaUsedUp(worker);
    }

    /// <summary>[SLICE-FLAG] on N threads: work waits that no idle thread will take (every thread runs an item), or work waits at this
    /// item's own level while the level is at its cap (this item holds one of its slots).</summary>
    private protected override bool YieldFreesWaitingWork(SchedulerThread thread)
    {
        if (Volatile.Read(ref _runningTotal) >= ThreadCount && HasRunnableWorkAbove(-1))
        {
            return true;
        }

        int own = thread.AccountedLevel;
        return own >= 0 && (Volatile.Read(ref _saturated) & (1L << own)) != 0 && !_queues.IsEmpty(own);
    }
}
