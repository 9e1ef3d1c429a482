using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The engine of the pool: N threads sharing one LevelQueues (dequeued without a lock by default, D-N).
//
// ---- Protocols (read before changing anything below) -----------------------------------------------------------------------
//
// Dispatch (D-N): the pool has two modes, fixed at construction.
//   * Lock-free mode (the strict policy and no level capped: the default): every thread dequeues with
//     LevelQueues.TryDequeueHighestShared straight from the shared queues, without any lock; per item a thread writes only its own
//     fields (PoolWorker's counts and accounted level). This is LevelQueues with several consumers (its M1): ConcurrentQueue.TryDequeue
//     is multi-consumer safe, and I1's bit clear (clear, then look at the queue again) keeps the store-buffer argument with several
//     clearers (a producer either sees the cleared bit and sets it, or the clearing thread's second look sees the item and sets it
//     back); an item a second look saw may be taken by another consumer first (a stale bit, which the next dequeue clears). What
//     several clearers add is a window: between a clear and its second look the bit is clear while the level may hold an item whose
//     enqueue returned; M1 counts the clears, and a dequeue whose mask read a clear may have overlapped looks at the queues above the
//     level it chose. So the rule below holds exactly: an item whose enqueue returned before a dequeue began is not overtaken by it.
//     Nothing else a consumer does is used in this mode: the peek slot is the aging policy's, and the single loop never calls the
//     shared dequeue, so its hot path pays nothing. Tests: PoolSharedDequeueTests (the window, deterministically; and raced, Stress),
//     PoolOrderingStressTests (exactly once, per-producer FIFO, strict priority at each dequeue, with DequeueObserver serialised with
//     the dequeue), the contract suites and the shutdown races.
//   * Locked mode (a cap, aging or weighted shares): the consumer of LevelQueues is whichever thread holds _dispatchLock: every
//     dequeue, every policy decision and every update of the per-level running counts happens under it, once per item (the end of the
//     previous item and the dequeue of the next share one acquisition). So the policies run unchanged (the struct-generic pattern,
//     the same code as the single loop's, with the mask of levels below their cap).
//   Producers never take the lock, in either mode: they enqueue with the fence of LevelQueues.Enqueue, from any thread.
//   * Strict priority at each dequeue: the item taken is the oldest item of the highest level that holds work and is below its cap
//     (StrictPriorityPolicy.TryDequeue with the allowed mask under the lock; LevelQueues.TryDequeueHighestShared in lock-free mode);
//     other policies choose as on the single loop among the same levels. Precisely: an item whose enqueue returned before a dequeue
//     began, at a level that dequeue may take, is not overtaken by it (that dequeue takes an item of its level or a higher one).
//   * FIFO per producer within a level: each level is one linearizable queue. Items dequeued one after the other may run at the
//     same time on two threads: "dequeued first" is not "finished first".
//   * Caps (K-N, locked mode only): _running[L] counts the slots of level L in use: one per running item, accounted at its dequeue
//     level (PoolWorker.AccountedLevel), plus one per nested run that borrowed one. A level at its cap has its bit in _saturated and is
//     not offered to the policy. A thread skips it and takes the best item of the other levels: a cap never idles a thread while
//     runnable work of another level waits. What moves or borrows a slot:
//       - an inline Prioritize that changes level moves the running code's slot to the new level (only if it has room; else the
//         continuation is queued): the method goes on at the new level for good;
//       - a nested run (a task inlined by TaskScheduler.TryExecuteTaskInline: RunSynchronously, Wait, an ExecuteSynchronously
//         continuation; and an inline Send) borrows a slot at its level for its run only and gives it back at its end; the item it is
//         nested in keeps its own. A task is inlined only if its level has room (else it is queued, and a Wait waits for it); a nested
//         run at the running code's own level shares that slot (a Wait on a task of the caller's level must not need a second slot
//         of a level capped at 1); an inline Send whose level is full still runs inline on the caller's slot (queueing it and blocking
//         could deadlock: the slot it waits for may be its caller's), so while it runs its level may be one over its cap. An inline
//         Prioritize inside a nested run that holds no slot of its own (PoolWorker.OnOuterSlot) takes a slot at its new level rather
//         than move the outer code's, and the nested run's end gives it back.
//     A slot freed while code goes on running (a move, the end of a nested run) wakes a parked thread for the freed level's queued
//     items (P2), and the bit is cleared with a full fence (ReleaseSlotLocked). Tests:
//     PriorityThreadPoolTests.Cap_FreedByAnInlinePrioritize_WakesAParkedThreadForTheQueuedItemOfThatLevel, PoolNestedRunTests.
//
// Parking and waking (P1): a thread that found nothing spins first (P3), then goes idle (Deactivate, E-N), then parks: it pushes
// itself on the idle stack (under _idleLock) and publishes _idleCount, then issues a full fence and re-checks for runnable work
// (mask & ~_saturated), a due timer and the end; only then does it wait on its own event. A producer enqueues (full fence), then
// reads _idleCount (and _spinning, P3); if a thread is parked and none spins it pops ONE worker (under _idleLock) and sets that
// worker's event. Store-buffer pattern with fences on both sides: either the parking thread's re-check sees the item, or the
// producer sees it in the stack and wakes it (or another parked thread). A popped worker that had already found work by itself
// gets a stale Set: it costs one extra lap, never a lost wake-up; a worker removes itself from the stack whenever it leaves Park,
// so the stack holds only threads that are really parked or about to.
//   * Work conservation (P2): after every dequeue (and after an inline Prioritize that frees a capped level's slot), if runnable
//     work remains, a thread is parked and none spins, one more is woken.
//     So N items queued at once wake threads one after the other until all run, and an item of a level whose cap has just freed is
//     picked up by a parked thread while the finishing thread takes something else.
//   * A post from a thread of the pool wakes a parked thread too (it is busy with its own item until it ends).
//   * Spinning (P3): a thread that found nothing spins up to IdleSpinCount laps in SpinForWork, counted in _spinning (interlocked
//     on entry and exit), looking for runnable work or a due timer. While a thread spins, a post (and P2) wakes no parked thread:
//     the spinner takes the item, and if more remains, its own P2 wakes the next thread (as the .NET thread pool's spinning workers
//     and Tokio's searching workers avoid a wake-up storm: one kernel Set per post when two threads drain faster than one producer
//     posts). No lost wake-up: the spinner's decrement is a full fence before its next look at the queues (its take, or Park's
//     re-check): a producer that read _spinning != 0 read it before that decrement, so that look sees its item (store-buffer again).
//     Test: PoolWakeUpStressTests (posts at random moments of run/spin/park each run, pairs that must run at once both get a
//     thread; no timer armed, so a lost wake-up fails a bounded wait instead of being rescued by a timer's timeout).
//   The end and a fault do not rely on P3: WakeAll pops every parked thread whatever _spinning says. The timers' flag
//   (RaiseTimersDue) and the release of the last outstanding operation (OperationCompleted) do: they call WakeOne, which skips the
//   wake while a thread spins. That is correct because a spinner looks at both between laps (SpinForWork leaves on _timersDue != 0,
//   then fires the timers; and on _outstanding <= 0, then checks the end under the lock in Deactivate), and Park's re-check reads both
//   after its fence: the same store-buffer argument as for an item (the flag and the count are written with interlocked operations).
//
// Ending (E-N): the pool ends when no operation is outstanding (the pool's own hold is released by Complete), no item runs on any
// thread and no work is queued, or on a fault. The check runs under _dispatchLock in Deactivate, when a thread has found nothing
// and spun. "No item runs" is _runningTotal == 0: in locked mode it counts the items running; in lock-free mode it counts the
// active threads, those between Activate (under the lock, on start and after Park, refused once the pool ended) and Deactivate
// (under the lock): a thread dequeues and runs only while active, so at 0 nobody holds an item and nobody dequeues, and no thread
// becomes active after the end is published. The thread that finds the end publishes Finished (interlocked) and wakes every
// parked thread; each thread leaves its loop; the last one to leave drops what is left (and the armed timers), then completes
// Completion. A post that raced the end is drained by the last thread or by its own poster, who re-checks the state after
// enqueueing (as on the single loop): each item is run once or dropped once, never both, never neither (the ConcurrentQueue gives
// each item to one taker). Test: PoolShutdownRaceTests.
//
// Faults: an exception escaping an item raises UnhandledException on the thread that ran it; unless a handler sets Handled, the
// first such exception becomes the pool's fault: no dequeue starts after the fault is seen (locked mode checks it under the lock,
// with the dequeue; lock-free mode's check in TryTakeLockFree is check-then-act, so a thread whose check came just before the fault
// was set may dequeue and run one more item), items already running finish, what is queued is dropped (AbandonedAfterFault), and
// Completion faults with it. The fault cancels the root children's token from inside the faulting thread's dispatch: what a token
// callback throws is caught (CancelRootChildrenCore, as TaskScope.CancelChildren catches it), never thrown into the thread's loop,
// and reported after the fault in Completion; the parked threads are woken whatever happens. (A child's failure cancels the token
// too: there a callback's exception becomes a root failure.) From then on an await of Prioritize, Yield or Checkpoint on the pool
// does not go on: GetResult throws ObjectDisposedException on any thread, as for a finished pool (the single loop runs nothing more
// after its fault; here the running items are told at their next await). An await that races the fault may go on or throw.
// A clock that throws (the options' TimeProvider, read by LoopTimers.FireDue on whichever thread fires the timers: between items,
// at a checkpoint, at an inline Prioritize or task) faults the pool the same way, with the provider's own exception (T4 in
// Timers/LoopTimers.cs): FireDue catches it, so it never escapes a thread's loop (it would end the process), and hands it to
// SetFault outside the timer lock; UnhandledException is not raised (no handler may mark it handled: the timers could not run).
// At the end, a throwing Dispose of the clock's timer is reported as a WorkDropped handler's exception is (T6).
//
// Timers: the flag _timersDue is read between items by every thread; the one whose interlocked exchange clears it fires the due
// timers (LoopTimers.FireDue), queueing each firing at its level (a producer's enqueue; the next dequeue orders it). T0-T3 hold
// as on the single loop (Timers/LoopTimers.cs); only the first thread to park waits with T3's timeout (so N threads do not all wake
// for one timer); the alarm still guarantees every firing.
//
// ExecutionContext (E1): as on the single loop: each item enters the context it was queued with (WorkItem.Invoke); a parking thread
// enters the default context first.
//
// Watchdog: one per thread (PoolWorker), on the process-wide watchdog thread: a thread whose dispatch count has not moved for the
// stall timeout while work waits is reported, even while the other threads keep the pool moving (a sum would hide it).
public sealed partial class PriorityThreadPool : ITimerHost, IItemDropper
{
    private const int StateRunning = 1;
    private const int StateCompleted = 2;
    private const int StateFaulted = 3;

    private readonly LevelQueues _queues;
    private readonly PriorityThreadPoolSynchronizationContext[] _syncContexts;
    private readonly PriorityThreadPoolTaskScheduler[] _schedulers;
    private readonly TaskFactory[] _factories;
    private readonly int[] _running; // under _dispatchLock (K-N)
    private readonly int[] _maxConcurrency;
    private readonly bool _capped;
    private readonly int _idleSpinCount;
    private readonly object _dispatchLock = new();
    private readonly object _idleLock = new();
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _rootCancellation = new();
    private readonly LoopTimers _loopTimers;
    private readonly LoopTimeProvider _timeProvider;
    private readonly LoopTimeProvider?[] _levelTimeProviders;
    private readonly long _timeSliceTicks; // the quota in Stopwatch ticks; 0: none (Checkpoints/PriorityThreadPool.Checkpoint.cs)
    private readonly bool _timeSliceWatched;

    private PoolWorker[] _workers = [];
    private PoolWorker[] _idleStack = [];
    private Watchdog?[] _watchdogs = [];
    private int _idleTop; // under _idleLock
    private volatile int _idleCount; // = _idleTop, read by producers after their fence (P1)
    private long _saturated; // bit L: level L at its cap (K-N); written under _dispatchLock, read anywhere
    private int _runningTotal; // under _dispatchLock; read with Volatile by idle threads. Locked mode: items running; lock-free: active threads (E-N)
    private int _spinning; // threads in SpinForWork (P3); interlocked
    private readonly bool _lockFree; // D-N: the strict policy and no cap: dequeue without _dispatchLock
    private readonly object _observerLock = new(); // tests only (DequeueObserver in lock-free mode)
    private int _state = StateRunning;
    private int _outstanding = 1; // the pool's own hold, released by Complete()
    private int _completeRequested;
    private int _liveThreads;
    private int _timersDue;
    private long _dropped;
    private long _wakeCount;
    private ExceptionDispatchInfo? _fault;
    private List<Exception>? _rootFailures; // under _rootFailuresLock
    private bool _rootFailuresClosed; // under _rootFailuresLock: Completion is being completed (CloseRootFailures)
    private IReadOnlyCollection<Exception>? _faultCallbackFailures; // what the token's callbacks threw when the fault cancelled it
    private readonly object _rootFailuresLock = new();

    private PolicyKind _policyKind;
    private AgingDispatch? _aging;
    private WeightedSharesDispatch? _shares;
    private int _stampAlways;

    internal LevelQueues Queues => _queues;

    internal bool IsFinished => Volatile.Read(ref _state) >= StateCompleted;

    /// <summary>Whether the calling thread is one of the pool's own, whatever it runs: an item, or (on the last thread, after it left
    /// its loop and unbound its worker) the drop handlers as the pool ends. Completion is completed by one of these threads, so none
    /// of them may wait for it (Dispose). By thread identity: a scan of at most ThreadCount references, off the hot path.</summary>
    internal bool IsOwnThread()
    {
        Thread current = Thread.CurrentThread;
        foreach (PoolWorker worker in _workers)
        {
            if (ReferenceEquals(worker.Thread, current))
            {
                return true;
            }
        }

        return false;
    }

    internal CancellationToken RootCancellation => _rootCancellation.Token;

    /// <summary>For tests: how many times a producer had to wake a parked thread.</summary>
    internal long WakeCount => Interlocked.Read(ref _wakeCount);

    /// <summary>For tests: called under the dispatch lock with the level and state of every item dequeued, in dequeue order.</summary>
    internal Action<int, object?>? DequeueObserver { get; set; }

    /// <summary>For tests, set together with <see cref="DequeueObserver"/>: called as each dequeue begins (before it reads the mask), in
    /// the same critical section as the observer's call for the item it takes, so a test knows what had been posted when it began.
    /// (Not the moment the item was posted: a dequeue that read a stale bit of a level that was empty may take an item posted after it
    /// began, while an item posted before that one waits above.)</summary>
    internal Action? DequeueStarting { get; set; }

    /// <summary>For tests: how many threads are parked (or about to park).</summary>
    internal int IdleCount => _idleCount;

    /// <summary>For tests: the number of timers armed now.</summary>
    internal int ArmedTimerCount => _loopTimers.ArmedCount;

    // ---- Start ---------------------------------------------------------------------------------------------------------------

    private void InitializePolicy(PriorityPolicy policy)
    {
        _policyKind = policy.Kind;
        switch (policy)
        {
            case AgingPriorityPolicy aging:
                _aging = new AgingDispatch(aging, clock: null);
                _stampAlways = 1;
                break;
            case WeightedSharesPriorityPolicy shares:
                _shares = new WeightedSharesDispatch(shares, clock: null);
                break;
        }
    }

    private WeightedSharesDispatch SharesPolicy(string operation) =>
        _shares ?? throw new InvalidOperationException(
            $"{operation} needs the weighted-shares policy, and the PriorityThreadPool '{Name}' runs {Policy}. " +
            "Create the pool with PriorityThreadPoolOptions.Policy = PriorityPolicy.WeightedShares(...).");

    private void StartThreads(TimeSpan? stallTimeout, Action<PriorityThreadPool, int>? threadStartingForTests)
    {
        _workers = new PoolWorker[ThreadCount];
        _idleStack = new PoolWorker[ThreadCount];
        _watchdogs = new Watchdog?[ThreadCount];
        _liveThreads = ThreadCount;
        for (int i = 0; i < ThreadCount; i++)
        {
            _workers[i] = new PoolWorker(this, i);
        }

        int started = 0;
        try
        {
            for (; started < ThreadCount; started++)
            {
                PoolWorker worker = _workers[started];
                _watchdogs[started] = stallTimeout is { } timeout ? Watchdog.Start(worker, timeout) : null;
                var thread = new Thread(static state => ((PoolWorker)state!).Pool.WorkerMain((PoolWorker)state!))
                {
                    IsBackground = true,
                    Name = $"{Name} #{started}",
                };
                worker.Thread = thread;
                threadStartingForTests?.Invoke(this, started);
                thread.UnsafeStart(worker); // in the default context, as a thread-pool thread (E1), not in the creator's
            }
        }
        catch (Exception ex)
        {
            AbandonStart(started, ex);
            throw;
        }
    }

    /// <summary>The constructor failed to start thread <paramref name="started"/> (the OS refused it): the threads already started
    /// must leave, and the pool must leave the metrics registry and the watchdog, as at a normal end. The unstarted threads never
    /// decrement _liveThreads, so they are taken off it first. Then this thread publishes the end itself (E-N: no item runs, so no
    /// thread would reach Deactivate to publish it; a parked thread leaves through Activate, which does not) and the fault, whose
    /// WakeAll makes every started thread leave its loop, the last one running OnLastThreadEnded; with none started, this thread
    /// runs it. No item can be queued yet: the constructor has not returned.</summary>
    private void AbandonStart(int started, Exception failure)
    {
        int live = Interlocked.Add(ref _liveThreads, started - ThreadCount);
        Interlocked.Exchange(ref _state, StateFaulted);
        SetFault(ExceptionDispatchInfo.Capture(failure));
        if (live == 0)
        {
            OnLastThreadEnded();
        }
    }

    // ---- Queueing -----------------------------------------------------------------------------------------------------------

    /// <summary>Queues one item at <paramref name="level"/>, from any thread (E-N for the race with the end, P1 for the wake-up).</summary>
    internal void Enqueue(int level, SendOrPostCallback callback, object? state, ExecutionContext? executionContext)
    {
        long enqueuedAt = StampsEnqueueTime ? Stopwatch.GetTimestamp() : 0; // the aging policy or the wait histogram (Diagnostics)
        var item = new WorkItem(callback, state, executionContext, enqueuedAt);
        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            Drop(level, item, DropReasonNow());
            return;
        }

        _queues.Enqueue(level, item); // ends with a full fence (I1, P1)

        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            // The pool finished while we were enqueueing; its last thread may have drained before our item landed.
            DropRemaining()?.Throw();
            return;
        }

        WakeOne();
    }

    internal void QueueContinuation(int level, Action continuation, bool flowExecutionContext)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        Enqueue(level, PriorityContext.s_runPrioritizeContinuation, continuation, flowExecutionContext ? ExecutionContextFlow.Capture() : null);
    }

    internal void Send(int level, SendOrPostCallback callback, object? state)
    {
        if (PoolWorker.Current is { } worker && worker.Pool == this)
        {
            // On a pool thread: run inline (queueing and waiting could deadlock a pool whose threads all wait), at the target level,
            // as a nested run (K-N): on a slot borrowed at the level if it has room, else on the caller's.
            if (!_capped)
            {
                InlineAt.Run(_syncContexts[level], callback, state);
                return;
            }

            TryEnterNested(worker, level, shareWhenFull: true, out NestedSlot outer);
            try
            {
                InlineAt.Run(_syncContexts[level], callback, state);
            }
            finally
            {
                ExitNested(worker, outer);
            }

            return;
        }

        if (IsFinished)
        {
            throw new ObjectDisposedException(Name, $"The PriorityThreadPool '{Name}' has finished ({State}), so Send at level {level} cannot run; the callback did not run. Send needs running threads; Post is still accepted after the end (the callback is dropped and reported through WorkDropped).");
        }

        SendWaiter waiter = SendWaiter.Rent(callback, state);
        Enqueue(level, SendWaiter.RunCallback, waiter, ExecutionContextFlow.Capture());
        waiter.WaitAndRethrow(Name);
    }

    internal void OperationStarted() => Interlocked.Increment(ref _outstanding);

    internal void OperationCompleted()
    {
        // As PriorityContext.OperationCompleted: an unmatched call throws; the compare-exchange is P1's fence before WakeOne.
        int current = SchedulerOperations.Release(ref _outstanding, nameof(PriorityThreadPool), Name);
        if (current == 1)
        {
            WakeOne(); // a parked thread checks the end (E-N); if every thread is busy, the last to finish its item does
        }
    }

    /// <summary>P1 and P3: wakes one parked thread, if any and if no thread is spinning (a spinning thread sees the work before it
    /// parks). The caller published its work with a full fence before.</summary>
    private void WakeOne()
    {
        if (_idleCount == 0 || Volatile.Read(ref _spinning) != 0)
        {
            return; // every thread is busy or spinning: it will see the work before it parks (P1, P3)
        }

        PopAndWake();
    }

    /// <summary>Pops one parked thread and sets its event; false if none was parked.</summary>
    private bool PopAndWake()
    {
        PoolWorker worker;
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

        Interlocked.Increment(ref _wakeCount);
        worker.Event.Set();
        return true;
    }

    /// <summary>The end or a fault: every parked thread, spinning or not (P3 does not apply: each must see the state itself).</summary>
    private void WakeAll()
    {
        while (_idleCount != 0 && PopAndWake())
        {
        }
    }

    // ---- The threads ----------------------------------------------------------------------------------------------------------

    private void WorkerMain(PoolWorker worker)
    {
        worker.Bind();
        try
        {
            RunWorker(worker);
        }
        finally
        {
            worker.AccountedLevel = -1;
            SynchronizationContext.SetSynchronizationContext(null);
            ExecutionContextFlow.Enter(null);
            PoolWorker.Unbind();
            if (Interlocked.Decrement(ref _liveThreads) == 0)
            {
                OnLastThreadEnded();
            }
        }
    }

    private void RunWorker(PoolWorker worker)
    {
        while (Activate())
        {
            while (true)
            {
                if (Volatile.Read(ref _timersDue) != 0)
                {
                    FireDueTimers();
                }

                if (_lockFree ? TryTakeLockFree(worker, out WorkItem item, out int level) : TryTakeLocked(worker, out item, out level))
                {
                    Dispatch(worker, in item, level);
                    continue;
                }

                // Nothing this thread may run now: spin a little (P3: posts meanwhile wake no parked thread), then go idle. In lock-free
                // mode nothing else ends the item's accounting (locked mode ends it at the next take, under the lock: K-N), and the
                // running gauge must not count a spinning thread.
                if (_lockFree)
                {
                    worker.AccountedLevel = -1;
                }

                if (!SpinForWork())
                {
                    break;
                }
            }

            if (!Deactivate(worker))
            {
                break;
            }

            Park(worker);
        }

        WakeAll(); // every thread leaves its loop; the last one drops what is left (E-N)
    }

    /// <summary>Runs one dequeued item on this thread: the per-item path, the same in both dispatch modes (D-N).</summary>
    private void Dispatch(PoolWorker worker, in WorkItem item, int level)
    {
        worker.CountDispatch(level);

        // P2: more runnable work and a parked thread, and no thread spinning that would take it (P3): wake one, so the pool is
        // work-conserving. The queues are looked at, not only the mask: the level just dequeued keeps its (possibly stale) bit until
        // a dequeue finds it empty (I1), and a stale bit must not wake a thread for nothing.
        if (_idleCount != 0 && Volatile.Read(ref _spinning) == 0 && HasRunnableWorkAbove(-1))
        {
            WakeOne();
        }

        SynchronizationContext.SetSynchronizationContext(_syncContexts[level]);
        try
        {
            Invoke(worker, in item, level); // one field read per item; every per-item diagnostic is behind it (Diagnostics)
        }
        catch (Exception ex)
        {
            OnUnhandledException(ex, level);
        }
    }

    /// <summary>D-N, lock-free mode (strict policy, no caps): the oldest item of the highest level that holds work, taken without
    /// the dispatch lock (LevelQueues' M1). The caller is active (counted in _runningTotal), so the end cannot be found while it holds
    /// an item.</summary>
    private bool TryTakeLockFree(PoolWorker worker, out WorkItem item, out int level)
    {
        if (Volatile.Read(ref _fault) is not null || Volatile.Read(ref _state) != StateRunning)
        {
            item = default;
            level = -1;
            return false; // a fault: no dequeue starts after it is seen (check-then-act: one begun just before may still take an item)
        }

        bool got;
        if (DequeueObserver is { } observer)
        {
            // Tests only: the dequeue and its observation in one critical section, so that the observed order is the dequeue order.
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

    /// <summary>D-N, locked mode (caps, aging, weighted shares): under the dispatch lock, the end of the previous item and the
    /// dequeue of the next share one acquisition.</summary>
    private bool TryTakeLocked(PoolWorker worker, out WorkItem item, out int level)
    {
        lock (_dispatchLock)
        {
            EndItemLocked(worker);
            DequeueStarting?.Invoke(); // tests only: the dequeue begins (under the lock, as the observer's call)

            if (_fault is not null || Volatile.Read(ref _state) != StateRunning || !TryDequeueLocked(out item, out level))
            {
                item = default;
                level = -1;
                return false;
            }

            TakeSlotLocked(level);
            _runningTotal++;
            worker.AccountedLevel = level;
            DequeueObserver?.Invoke(level, item.State); // tests only: the dequeue order, seen under the lock
            if (_shares is not null)
            {
                worker.ItemStart = _shares.Now();
            }

            return true;
        }
    }

    /// <summary>Under the lock: the item this worker ran has ended: release its level's slot and charge its time (locked mode).</summary>
    private void EndItemLocked(PoolWorker worker)
    {
        int level = worker.AccountedLevel;
        if (level < 0)
        {
            return;
        }

        worker.AccountedLevel = -1;
        _runningTotal--;
        ReleaseSlotLocked(level); // P2 follows in Dispatch if this thread takes an item; if it takes none, nothing is runnable

        _shares?.Charge(level, _shares.Now() - worker.ItemStart);
    }

    private bool TryDequeueLocked(out WorkItem item, out int level)
    {
        ulong allowed = ~(ulong)_saturated;
        return _policyKind switch
        {
            PolicyKind.Aging => _aging!.TryDequeue(_queues, allowed, out item, out level),
            PolicyKind.WeightedShares => _shares!.TryDequeue(_queues, allowed, out item, out level),
            _ => StrictPriorityPolicy.TryDequeue(_queues, allowed, out item, out level),
        };
    }

    /// <summary>E-N: a thread that starts (or leaves Park) becomes active. Lock-free mode: under the lock, counted in _runningTotal,
    /// unless the pool has ended or faulted (then it leaves). Locked mode: each take checks the state under the lock already.</summary>
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

    /// <summary>E-N: a thread that found nothing to run goes idle: under the lock, it stops counting as active (lock-free mode) and
    /// checks the end. False: the pool has ended (this thread may be the one that found it); the thread leaves its loop.</summary>
    private bool Deactivate(PoolWorker worker)
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

            if (ShouldFinishLocked())
            {
                Interlocked.Exchange(ref _state, _fault is null ? StateCompleted : StateFaulted);
                return false;
            }

            return true;
        }
    }

    /// <summary>Under the lock (E-N): nothing outstanding, nothing running, nothing queued (stale bits cleared on the way); or a fault.
    /// Lock-free mode: _runningTotal counts the active threads, so at 0 no other thread dequeues, and this one may clear bits (I1).</summary>
    private bool ShouldFinishLocked() =>
        _fault is not null
        || (Volatile.Read(ref _outstanding) <= 0 && _runningTotal == 0 && !_queues.HasWaitingWork());

    /// <summary>P3: a thread that found nothing spins up to IdleSpinCount laps, counted in _spinning, until work it may run appears.
    /// False: nothing came (or the pool is ending): the caller goes idle and parks (P1).</summary>
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

            // Every fourth lap gives the core away if another thread waits for one (sched_yield: returns at once otherwise). With
            // more runnable threads than cores (a producer beside N busy pool threads on N cores), a lap that only spun would keep
            // the producer, whose post it waits for, off the core.
            if ((i & 3) == 3)
            {
                Thread.Yield();
            }
            else
            {
                Thread.SpinWait(20);
            }
        }

        // A full fence before the caller's next look at the queues (its take, or Park's re-check after its own fence): a producer
        // that read _spinning != 0 and did not wake anyone is covered by that look (P3).
        Interlocked.Decrement(ref _spinning);
        return found;
    }

    private void Park(PoolWorker worker)
    {
        ExecutionContextFlow.Enter(null); // idle in the default context: what the last item left is not kept alive (E1)
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

        Interlocked.Exchange(ref worker.Parked, 1); // a full fence before the re-check (P1)
        if (!HasRunnableWorkOrShouldStop())
        {
            // Only the first thread to park waits for the earliest timer (T3); the alarm guarantees the firing (T0).
            int timeout = firstToPark ? _loopTimers.ParkTimeoutMilliseconds() : Timeout.Infinite;
            if (!worker.Event.Wait(timeout) && _loopTimers.EarliestIsDue())
            {
                Interlocked.Exchange(ref _timersDue, 1);
            }
        }

        Volatile.Write(ref worker.Parked, 0);
        lock (_idleLock)
        {
            if (worker.InIdleStack)
            {
                // Not popped by a producer: take ourselves out (find, then move the top into the hole; the order is only a preference).
                int index = Array.IndexOf(_idleStack, worker, 0, _idleTop);
                _idleStack[index] = _idleStack[--_idleTop];
                _idleStack[_idleTop] = null!;
                worker.InIdleStack = false;
                _idleCount = _idleTop;
            }
        }
    }

    // The end condition is "nothing outstanding and nothing running": with only "nothing outstanding", idle threads would spin while
    // another runs a long last item. The last thread to go idle checks the end itself, under the lock (Deactivate, E-N).
    private bool HasRunnableWorkOrShouldStop() =>
        (_queues.NonEmptyMask & ~(ulong)Volatile.Read(ref _saturated)) != 0
        || Volatile.Read(ref _timersDue) != 0
        || (Volatile.Read(ref _outstanding) <= 0 && Volatile.Read(ref _runningTotal) == 0)
        || Volatile.Read(ref _state) != StateRunning
        || Volatile.Read(ref _fault) is not null;

    private void OnUnhandledException(Exception exception, int level)
    {
        if (SchedulerOperations.RaiseUnhandled(this, UnhandledException, Name, exception, level) is { } fault)
        {
            SetFault(fault);
        }
    }

    private void SetFault(ExceptionDispatchInfo fault)
    {
        if (Interlocked.CompareExchange(ref _fault, fault, null) is null)
        {
            try
            {
                // The root children of Priority.Start end with the pool. Their token's callbacks run here, inside this thread's
                // dispatch: what they throw is reported with the fault (OnLastThreadEnded reads it after every thread left).
                _faultCallbackFailures = CancelRootChildrenCore()?.InnerExceptions;
            }
            finally
            {
                WakeAll(); // parked threads see the fault and leave (E-N)
            }
        }
    }

    private void OnLastThreadEnded()
    {
        // E-N: every thread has left its loop; the state is Completed or Faulted (published by the thread that found the end).
        foreach (Watchdog? watchdog in _watchdogs)
        {
            watchdog?.Dispose();
        }

        ContextRegistry.Unregister(this); // the instruments stop reporting the pool (registered in the constructor)
        StopSliceWatch();

        ExceptionDispatchInfo? handlerFailure = DropRemaining();
        ExceptionDispatchInfo? timerHandlerFailure = _loopTimers.DropArmed();
        handlerFailure ??= timerHandlerFailure;
        // The workers' events are not disposed: a poster that popped a worker just before the end may still set its event (a
        // ManualResetEventSlim that never blocked in the kernel holds nothing to release; one that did is finalized).

        Exception[]? rootFailures = CloseRootFailures();
        if (_fault is { } fault)
        {
            _completion.TrySetException([fault.SourceException, .. _faultCallbackFailures ?? []]);
        }
        else if (handlerFailure is not null)
        {
            _completion.TrySetException(handlerFailure.SourceException);
        }
        else if (rootFailures is not null)
        {
            _completion.TrySetException(rootFailures);
        }
        else
        {
            _completion.TrySetResult();
        }

        _rootCancellation.Dispose();
    }

    // ---- Inline checks (Prioritize, Checkpoint, inlined tasks) ------------------------------------------------------------------

    /// <summary>Whether code on one of this pool's threads may go on at <paramref name="level"/> at once, as far as priority goes: the
    /// pool runs and nothing this thread may run waits above. Fires due timers first, so a due timer above runs first.</summary>
    private bool MayGoOnAt(int level, [NotNullWhen(true)] out PoolWorker? worker)
    {
        worker = PoolWorker.Current;
        if (worker is null || worker.Pool != this || Volatile.Read(ref _state) != StateRunning)
        {
            return false;
        }

        if (Volatile.Read(ref _timersDue) != 0)
        {
            FireDueTimers();
        }

        return !HasRunnableWorkAbove(level);
    }

    /// <summary>A moment's look (no lock): a level above <paramref name="level"/> (-1: any level), below its cap, holds an item. Stale bits are
    /// skipped by looking at the queue; nothing is cleared (only a dequeuing thread clears bits: I1, M1).</summary>
    /// <remarks>M1's window is left open here on purpose: the mask alone is read, so a bit cleared by a dequeuing thread between its
    /// clear and its second look hides an item whose enqueue returned. That look finds the item, and that thread takes it at once (or
    /// another dequeue does first, M1): the item already has a taker, so an inline Prioritize or a checkpoint that goes on meanwhile
    /// keeps nothing waiting that yielding would have let run sooner. Closing it would put M1's two reads (and now and then a look at
    /// every level above) on every inline Prioritize and Checkpoint, and P2's check after every dequeue.</remarks>
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

    /// <summary>The inline end of an <c>await Prioritize</c> on a pool thread: the method goes on at <paramref name="level"/> for good,
    /// so its slot moves there (K-N). Never after a fault: the awaiter's GetResult then throws (see "Faults").</summary>
    internal bool TryContinueInlineAt(int level)
    {
        if (Volatile.Read(ref _fault) is not null || !MayGoOnAt(level, out PoolWorker? worker))
        {
            return false;
        }

        if (_capped && worker.AccountedLevel != level && worker.AccountedLevel >= 0 && !TryMoveAccountedLevel(worker, level))
        {
            return false; // queued instead: it runs when the level has room
        }

        PriorityThreadPoolSynchronizationContext target = _syncContexts[level];
        if (!ReferenceEquals(SynchronizationContext.Current, target))
        {
            SynchronizationContext.SetSynchronizationContext(target);
        }

        return true;
    }

    /// <summary>K-N: an inline Prioritize that changes level moves the running code's slot, if the new level has room; code nested on
    /// its outer code's slot (<see cref="PoolWorker.OnOuterSlot"/>) takes one of its own instead, which its nested run's end gives
    /// back. A slot freed at a level that was at its cap makes that level's queued items runnable while this code goes on running: P2
    /// applies (a parked thread is woken for them), as after a dequeue; without it they would wait for this item's end with a thread
    /// parked.</summary>
    private bool TryMoveAccountedLevel(PoolWorker worker, int level)
    {
        bool freed;
        lock (_dispatchLock)
        {
            if (_running[level] >= _maxConcurrency[level])
            {
                return false;
            }

            freed = !worker.OnOuterSlot && ReleaseSlotLocked(worker.AccountedLevel);
            TakeSlotLocked(level);
            worker.AccountedLevel = level;
            worker.OnOuterSlot = false;
        }

        if (freed)
        {
            WakeForFreedSlot();
        }

        return true;
    }

    /// <summary>A task inlined on a pool thread (TaskScheduler.TryExecuteTaskInline: RunSynchronously, Wait, an ExecuteSynchronously
    /// continuation): only when nothing this thread may run waits above <paramref name="level"/> and, with caps, the level has room for
    /// the task's run (a nested run, K-N); the item it is nested in keeps its slot. False: not run (the task stays queued).</summary>
    internal bool TryRunTaskInline(int level, Func<Task, bool> tryExecuteTask, Task task)
    {
        if (!MayGoOnAt(level, out PoolWorker? worker))
        {
            return false;
        }

        if (!_capped)
        {
            return InlineAt.RunTask(_syncContexts[level], tryExecuteTask, task);
        }

        if (!TryEnterNested(worker, level, shareWhenFull: false, out NestedSlot outer))
        {
            return false;
        }

        try
        {
            return InlineAt.RunTask(_syncContexts[level], tryExecuteTask, task);
        }
        finally
        {
            ExitNested(worker, outer);
        }
    }

    /// <summary>What a nested run saved of the accounting of the code it is nested in (K-N), given back at its end.</summary>
    private readonly record struct NestedSlot(int Level, bool OnOuterSlot);

    /// <summary>K-N, capped pools: code nested in the running code at <paramref name="level"/> starts. At the running code's own level it
    /// shares that slot; else it borrows one at <paramref name="level"/> if the level has room, or, with
    /// <paramref name="shareWhenFull"/> (an inline Send), runs on the running code's slot all the same. False: no room, nothing
    /// changed.</summary>
    private bool TryEnterNested(PoolWorker worker, int level, bool shareWhenFull, out NestedSlot outer)
    {
        outer = new NestedSlot(worker.AccountedLevel, worker.OnOuterSlot);
        if (worker.AccountedLevel != level)
        {
            lock (_dispatchLock)
            {
                if (_running[level] < _maxConcurrency[level])
                {
                    TakeSlotLocked(level);
                    worker.AccountedLevel = level;
                    worker.OnOuterSlot = false;
                    return true;
                }
            }

            if (!shareWhenFull)
            {
                return false;
            }
        }

        worker.OnOuterSlot = true;
        return true;
    }

    /// <summary>K-N: the nested run ends: the slot it holds of its own (borrowed at its start, or taken by an inline Prioritize inside
    /// it) is given back, with P2 if that frees a level at its cap, and the outer code's accounting is restored.</summary>
    private void ExitNested(PoolWorker worker, NestedSlot outer)
    {
        bool freed = false;
        if (!worker.OnOuterSlot)
        {
            lock (_dispatchLock)
            {
                freed = ReleaseSlotLocked(worker.AccountedLevel);
            }
        }

        worker.AccountedLevel = outer.Level;
        worker.OnOuterSlot = outer.OnOuterSlot;
        if (freed)
        {
            WakeForFreedSlot();
        }
    }

    /// <summary>K-N, under the dispatch lock: one more slot of <paramref name="level"/> in use.</summary>
    private void TakeSlotLocked(int level)
    {
        if (++_running[level] >= _maxConcurrency[level])
        {
            _saturated |= 1L << level;
        }
    }

    /// <summary>K-N, under the dispatch lock: one slot of <paramref name="level"/> is given back (an item ends, a slot moves, a nested
    /// run ends). True if that took the level off its cap. The bit is cleared with an interlocked And, a full fence: the caller reads
    /// _idleCount afterwards for P2, and a thread parking meanwhile publishes itself in the idle stack, fences, then re-reads
    /// _saturated (P1), so either that re-check sees the level runnable or the caller sees the parked thread (the store-buffer pattern
    /// needs a full fence on both sides; the lock's release alone orders the clear only before later stores).</summary>
    private bool ReleaseSlotLocked(int level)
    {
        if (--_running[level] < _maxConcurrency[level] && (_saturated & (1L << level)) != 0)
        {
            Interlocked.And(ref _saturated, ~(1L << level));
            return true;
        }

        return false;
    }

    /// <summary>P2 after a slot was freed while code goes on running (the bit was cleared with a full fence, so this read of
    /// _idleCount cannot pass it: see ReleaseSlotLocked).</summary>
    private void WakeForFreedSlot()
    {
        if (_idleCount != 0 && Volatile.Read(ref _spinning) == 0 && HasRunnableWorkAbove(-1))
        {
            WakeOne();
        }
    }

    /// <summary>The checkpoint decision at <paramref name="level"/>: off the pool's threads always queue (hop on), unless the pool
    /// has stopped (the awaiter's GetResult then throws); on them, yield when work this thread may run waits above, or when this
    /// thread's item has used up its time quota and its yield is what lets waiting work run (C1-N in
    /// Checkpoints/PriorityThreadPool.Checkpoint.cs).</summary>
    internal bool ShouldYieldAt(int level)
    {
        PoolWorker? worker = PoolWorker.Current;
        if (worker is null || worker.Pool != this)
        {
            return !HasStopped;
        }

        if (Volatile.Read(ref _timersDue) != 0)
        {
            FireDueTimers();
        }

        return HasRunnableWorkAbove(level) || (Volatile.Read(ref worker.SliceExpired) != 0 && QuotaUsedUp(worker));
    }

    /// <summary>Whether the pool has faulted or finished: its awaitables no longer go on (see "Faults").</summary>
    internal bool HasStopped => Volatile.Read(ref _fault) is not null || IsFinished;

    /// <summary>The end of an <c>await</c> of the pool's Prioritize, Yield or Checkpoint, on any thread: once the pool has faulted or
    /// finished, the method does not go on (on a pool thread, the awaiter completed at once without moving it; elsewhere, its
    /// continuation was dropped and resumed on the thread pool).</summary>
    internal void ThrowIfResumedAfterFinish(int level)
    {
        if (HasStopped)
        {
            string what = Volatile.Read(ref _fault) is not null ? "faulted" : "finished";
            throw new ObjectDisposedException(Name, $"The PriorityThreadPool '{Name}' {what} before the awaiting method could resume at level {level}.");
        }
    }

    internal int ValidateLevel(int level)
    {
        if ((uint)level >= (uint)Levels)
        {
            throw new ArgumentOutOfRangeException(nameof(level), level, $"Level must be between 0 and {Levels - 1} for the PriorityThreadPool '{Name}' ({Levels} levels; higher runs first).");
        }

        return level;
    }

    // ---- Dropping -----------------------------------------------------------------------------------------------------------

    private DropReason DropReasonNow() =>
        Volatile.Read(ref _state) == StateFaulted ? DropReason.AbandonedAfterFault : DropReason.PostedAfterCompletion;

    private ExceptionDispatchInfo? DropRemaining() => _queues.DrainAll(this, DropReasonNow());

    void IItemDropper.Drop(int level, in WorkItem item, DropReason reason) => Drop(level, item, reason);

    private void Drop(int level, in WorkItem item, DropReason reason)
    {
        Interlocked.Increment(ref _dropped);
        DroppedWork.Record(Name, level, reason, item.Callback, item.State);
        DroppedWork.Release(item); // as on the single loop (a queued task is dropped and reported, as there)

        WorkDropped?.Invoke(this, new WorkDroppedEventArgs(level, item.Callback, item.State, reason));
    }

    // ---- Root children (Priority.Start on the pool) ---------------------------------------------------------------------------

    internal void StartRootChild(Func<CancellationToken, Task> child, int level)
    {
        ArgumentNullException.ThrowIfNull(child);
        ValidateLevel(level);
        if (IsFinished)
        {
            throw new InvalidOperationException($"Priority.Start was called on the PriorityThreadPool '{Name}', which has finished ({State}); no child can start.");
        }

        OperationStarted(); // released by OnRootChildEnded, whatever happens (K1 for the pool)
        var operation = new PoolInvokeOperation<object?>(this, level, child, hasResult: false, rootChild: true);
        Enqueue(level, IInvokeOperation.RunCallback, operation, ExecutionContextFlow.Capture());
    }

    internal void OnRootChildEnded(Task task)
    {
        try
        {
            if (task.IsFaulted)
            {
                lock (_rootFailuresLock)
                {
                    (_rootFailures ??= []).AddRange(task.Exception!.InnerExceptions);
                }

                // A failure cancels the other children, as a TaskScope's does. Before this child's hold is released, so before the
                // failures are closed (after a fault, which does not wait for the children, the fault has cancelled the token already
                // and this runs no callback).
                if (CancelRootChildrenCore() is { } callbackFailure)
                {
                    TryAddRootFailures(callbackFailure);
                }
            }
        }
        finally
        {
            OperationCompleted(); // the child's hold, after its failure was counted, whatever happened
        }
    }

    /// <summary>Cancels the root children's token, catching what TaskScope.CancelChildren catches for a scope's: the exceptions of the
    /// token's callbacks (returned, for the caller to record) never escape into whatever cancelled (a pool thread's dispatch at a
    /// fault, a child's end, a caller of <see cref="CancelRootChildren"/>).</summary>
    /// <returns>The callbacks' exceptions, or null.</returns>
    private AggregateException? CancelRootChildrenCore()
    {
        try
        {
            _rootCancellation.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // The pool already ended: every root child had ended before it could (they hold it open).
        }
        catch (AggregateException ex)
        {
            return ex;
        }

        return null;
    }

    /// <summary>Adds to the root failures, unless the last thread is completing Completion with them already (false).</summary>
    private bool TryAddRootFailures(AggregateException failures)
    {
        lock (_rootFailuresLock)
        {
            if (_rootFailuresClosed)
            {
                return false;
            }

            (_rootFailures ??= []).AddRange(failures.InnerExceptions);
            return true;
        }
    }

    /// <summary>As the last thread ends: no more root failures are recorded; those there are, in the order they happened, or null.</summary>
    private Exception[]? CloseRootFailures()
    {
        lock (_rootFailuresLock)
        {
            _rootFailuresClosed = true;
            return _rootFailures is { Count: > 0 } failures ? failures.ToArray() : null;
        }
    }

    // ---- Timers (ITimerHost) --------------------------------------------------------------------------------------------------

    internal ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken) => _loopTimers.Delay(delay, cancellationToken);

    internal int OverdueTimerLevel() => _loopTimers.OverdueTimerLevel();

    private void FireDueTimers()
    {
        // Only the thread whose exchange clears the flag fires (a full fence before the clock read, as on the single loop).
        if (Interlocked.Exchange(ref _timersDue, 0) != 0)
        {
            _loopTimers.FireDue();
        }
    }

    private int CreatingLevel() =>
        SynchronizationContext.Current is PriorityThreadPoolSynchronizationContext current && current.Pool == this ? current.Level : DefaultLevel;

    string ITimerHost.Kind => nameof(PriorityThreadPool);

    int ITimerHost.CreatingLevel() => CreatingLevel();

    void ITimerHost.Enqueue(int level, SendOrPostCallback callback, object? state, ExecutionContext? executionContext) =>
        Enqueue(level, callback, state, executionContext);

    // Under the timer lock: a producer's enqueue (never under _dispatchLock), then a wake-up if a thread is parked.
    void ITimerHost.EnqueueTimerFiring(int level, TimerEntry entry)
    {
        _queues.Enqueue(level, new WorkItem(TimerEntry.FireCallback, entry, enqueuedAt: _stampAlways != 0 ? Stopwatch.GetTimestamp() : 0));
        WakeOne();
    }

    void ITimerHost.RaiseTimersDue()
    {
        Interlocked.Exchange(ref _timersDue, 1);
        WakeOne();
    }

    // T4: on the thread that fired the timers, outside the timer lock; the fault stops the pool as an item's does (see "Faults").
    void ITimerHost.OnClockFailed(ExceptionDispatchInfo failure) => SetFault(failure);

    bool ITimerHost.IsRunningAt(int level) =>
        PoolWorker.Current?.Pool == this && SynchronizationContext.Current is PriorityThreadPoolSynchronizationContext current && current.Level == level;

    bool ITimerHost.TryGetOwnLevel(SynchronizationContext current, out int level)
    {
        if (current is PriorityThreadPoolSynchronizationContext own && own.Pool == this)
        {
            level = own.Level;
            return true;
        }

        level = -1;
        return false;
    }

    void ITimerHost.OnTimerDropped(TimerEntry entry)
    {
        Interlocked.Increment(ref _dropped);
        DroppedWork.Record(Name, entry.Level, DropReason.TimerArmedAtFinish, TimerEntry.FireCallback, entry);
        entry.OnDropped();
        WorkDropped?.Invoke(this, new WorkDroppedEventArgs(entry.Level, TimerEntry.FireCallback, entry, DropReason.TimerArmedAtFinish));
    }

    // ---- Watchdog -------------------------------------------------------------------------------------------------------------

    internal void OnStallDetected(PoolWorker worker, StallDetectedEventArgs report) =>
        StallReport.Raise(this, Name, StallDetected, report, $"thread {worker}", nameof(PriorityThreadPool), "pool", worker.Index);
}
