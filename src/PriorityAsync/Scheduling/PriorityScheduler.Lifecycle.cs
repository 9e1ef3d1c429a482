using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The lifecycle ([E-LIFE], [E-END]): one start and one end for every way a scheduler is consumed (the loop of Run and of a
// PriorityContextThread, a host's drains, the pool's threads). Every change of the state, of the consumer and of the owner's hold is
// in this file.
public abstract partial class PriorityScheduler
{
    private protected const int StateNotStarted = 0;
    private protected const int StateRunning = 1;
    private protected const int StateCompleted = 2;
    private protected const int StateFaulted = 3;

    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

    // [E-LIFE]: written only by Start and PublishEnd, each a single interlocked step.
    private protected int _state;

    // [Q-CONSUMER]: the thread that consumes the queues now: the loop's while its loop runs, a host's while it drains; null otherwise,
    // and always on a pool, whose threads all post as producers. The inline checks compare Thread.CurrentThread with it, because the JIT
    // reuses the thread-local base it already loaded for SynchronizationContext.Current, where a second thread-static would cost a call.
    private protected Thread? _consumer;

    // [E-LIFE]: 1 once the owner's hold (taken at creation, _outstanding starts at 1) was released; 1 once an end that drops what is
    // queued was requested (a host's Dispose), which the consumer carries out before its next item.
    private int _ownerHoldReleased;
    private int _endRequested;

    // [E-END], step 3: the work that started and waits (IPendingOperation), so that an end which drops its continuation completes
    // its task. Under _pendingLock, which is a leaf: no user code and no other lock under it.
    private readonly Lock _pendingLock = new();
    private HashSet<IPendingOperation>? _pending;
    private bool _pendingClosed;

    /// <summary>Whether an end that drops what is queued was requested ([E-LIFE]).</summary>
    internal bool EndRequested => Volatile.Read(ref _endRequested) != 0;

    // ---- Start ([E-LIFE]) ------------------------------------------------------------------------------------------------------

    /// <summary>NotStarted to Running, once (the loop as it starts, a host as it attaches, a pool as it is created), and from then on
    /// watched (the registry, the stall watchdog, the slice clock).</summary>
    /// <exception cref="InvalidOperationException">The scheduler has started before.</exception>
    private protected void Start()
    {
        int seen = Interlocked.CompareExchange(ref _state, StateRunning, StateNotStarted);
        if (seen != StateNotStarted)
        {
            throw new InvalidOperationException($"{SubjectAtStart} has already started ({State}); a scheduler starts once.");
        }

        StartWatching();
    }

    /// <summary>Releases the owner's hold, once whoever calls it (Complete of a PriorityContextThread, a host's driver or a pool; the end
    /// of Run's entry): the scheduler may end once nothing else is outstanding and nothing is queued. Idempotent; never blocks.</summary>
    internal void ReleaseOwnerHold()
    {
        if (Interlocked.Exchange(ref _ownerHoldReleased, 1) == 0)
        {
            OperationCompleted();
        }
    }

    /// <summary>Releases the owner's hold and waits for the end, rethrowing the fault; on one of the scheduler's own threads (an item,
    /// or a handler raised there as it ends) only releases it: a scheduler cannot wait for itself.</summary>
    internal void CompleteAndWait()
    {
        ReleaseOwnerHold();
        if (!IsOwnThread())
        {
            Completion.GetAwaiter().GetResult();
        }
    }

    /// <summary>As <see cref="CompleteAndWait"/>, returning a task that completes at the end (a completed one on an own thread).</summary>
    internal ValueTask CompleteAndWaitAsync()
    {
        ReleaseOwnerHold();
        return IsOwnThread() ? default : new ValueTask(Completion);
    }

    /// <summary>Whether the calling thread is one of the scheduler's, whatever it runs now: an item, or (after it left its loop) the
    /// drop handlers as the scheduler ends. By thread identity: a scan of at most the thread count references.</summary>
    internal bool IsOwnThread()
    {
        Thread current = Thread.CurrentThread;
        foreach (SchedulerThread thread in _threads)
        {
            if (ReferenceEquals(thread.Thread, current))
            {
                return true;
            }
        }

        return false;
    }

    // ---- The consumer ([Q-CONSUMER]) ------------------------------------------------------------------------------------------

    /// <summary>The calling thread consumes the queues from now on (the loop as it starts; a host's drain as it begins).</summary>
    private protected void BeginConsuming() => Volatile.Write(ref _consumer, Thread.CurrentThread);

    /// <summary>No thread consumes the queues (a host's drain as it returns; [E-END] step 1): a post, even from the thread that did, is
    /// a producer's from now on.</summary>
    private protected void EndConsuming() => Volatile.Write(ref _consumer, null);

    // ---- The end ([E-END]) -----------------------------------------------------------------------------------------------------

    /// <summary>Requests an end that drops what is queued ([E-LIFE]): with a full fence, before the caller wakes the consumer.</summary>
    private protected void RequestEnd() => Interlocked.Exchange(ref _endRequested, 1);

    /// <summary>[E-LIFE]: the end is due: a fault, an end requested, or nothing outstanding, nothing running (<paramref name="nothingRuns"/>:
    /// always on the loop, whose consumer is the caller; on a pool, no active thread) and nothing queued. On the consumer only (a pool:
    /// under its dispatch lock), whose look at the queues clears stale bits ([Q-MASK]).</summary>
    private protected bool MustEnd(bool nothingRuns) =>
        Volatile.Read(ref _fault) is not null
        || Volatile.Read(ref _endRequested) != 0
        || (Volatile.Read(ref _outstanding) <= 0 && nothingRuns && !_queues.HasWaitingWork());

    /// <summary>[E-END], step 2: Running to Completed (or Faulted, if a fault was set), with an interlocked step; once: a later call (the
    /// pool's last thread, after the thread that found the end published it) changes nothing.</summary>
    private protected void PublishEnd() =>
        Interlocked.CompareExchange(ref _state, Volatile.Read(ref _fault) is null ? StateCompleted : StateFaulted, StateRunning);

    /// <summary>[E-END] on the thread that ends the scheduler (the loop's; the host's, outside a drain; the pool's last thread to leave;
    /// the pool's constructor when no thread started), once, after every consumer left its loop: no thread is the consumer (step 1), the
    /// end is published (step 2), then <see cref="EndScheduler"/> (step 3). The caller has given the thread's own contexts back.</summary>
    /// <returns>The first exception a <see cref="WorkDropped"/> handler threw, or null.</returns>
    private protected ExceptionDispatchInfo? End()
    {
        EndConsuming();
        if (SchedulerThread.Current?.Scheduler == this)
        {
            SchedulerThread.Unbind(); // the loop's or the host's thread: Send no longer runs inline on it ([S-INLINE])
        }

        PublishEnd();
        return EndScheduler();
    }

    /// <summary>[E-END], step 3: stops the watchers, drops what is left and the armed timers, completes the tasks of work still waiting,
    /// closes the root scope and completes <see cref="Completion"/>.</summary>
    private ExceptionDispatchInfo? EndScheduler()
    {
        StopWatching();
        ExceptionDispatchInfo? handlerFailure = DropRemaining();
        ExceptionDispatchInfo? timerFailure = _loopTimers.DropArmed();
        handlerFailure ??= timerFailure;
        AbandonPending(); // after the drops, before the root scope closes: an abandoned root child is one of its ends
        Exception[]? rootFailures = Scope.CompleteRoot();
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

        return handlerFailure;
    }

    /// <summary>Where the end's caller is told the outcome itself (<c>PriorityContext.Run</c>; a host's drain or Dispose that ended the
    /// context): rethrows, as is, the fault, else what a <see cref="WorkDropped"/> handler threw (<paramref name="handlerFailure"/>),
    /// else the first failure of a root child. <see cref="Completion"/>'s exception counts as observed.</summary>
    private protected void ThrowOutcome(ExceptionDispatchInfo? handlerFailure)
    {
        _ = Completion.Exception;
        Fault?.Throw();
        handlerFailure?.Throw();
        TaskScope.ThrowFirst(Scope.RootFailures);
    }

    // ---- Work that waits ([E-END], step 3) ------------------------------------------------------------------------------------

    /// <summary>Work whose task the library handed out has started and now waits: tracked until it ends, or until the end completes
    /// its task. After that sweep (no operation starts once the scheduler's threads have left) it is abandoned at once.</summary>
    internal void TrackPending(IPendingOperation operation)
    {
        lock (_pendingLock)
        {
            if (!_pendingClosed)
            {
                (_pending ??= new HashSet<IPendingOperation>(ReferenceEqualityComparer.Instance)).Add(operation);
                return;
            }
        }

        operation.AbandonAtEnd();
    }

    /// <summary>The work has ended by itself: no longer the end's to complete.</summary>
    internal void UntrackPending(IPendingOperation operation)
    {
        lock (_pendingLock)
        {
            _pending?.Remove(operation);
        }
    }

    /// <summary>Every operation still waiting gets its task completed (faulted with ObjectDisposedException) and its hold released.
    /// After a graceful end there is none (each held the scheduler open); after an end that dropped what was queued (a host's Dispose,
    /// a fault) a waiting operation's continuation was dropped, or will be when it comes, so nothing else would.</summary>
    private void AbandonPending()
    {
        IPendingOperation[] pending;
        lock (_pendingLock)
        {
            _pendingClosed = true;
            if (_pending is not { Count: > 0 } set)
            {
                return;
            }

            pending = [.. set];
            set.Clear();
        }

        // Outside the lock: a scope child's end cancels its siblings' token, whose callbacks are user code (caught by the scope).
        foreach (IPendingOperation operation in pending)
        {
            operation.AbandonAtEnd();
        }
    }
}
