using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace PriorityAsync.Internal;

/// <summary>
/// One contended wait on a <see cref="PrioritySemaphore"/> (or a <see cref="PriorityLock"/>): the awaited source of its
/// <see cref="ValueTask"/>, ranked by the waiting code's level, and the edges that lend that level to the holders ([X-LOCK]).
/// Used once: the uncontended path allocates none.
/// </summary>
/// <remarks>A granted waiter resumes in its region's context ([X-LOCK]): its continuation is queued there rather than posted to the
/// context it captured, so the holder's first item is already one a later waiter can raise.</remarks>
internal sealed class LockWaiter : IValueTaskSource, IValueTaskSource<bool>, IValueTaskSource<PriorityLock.Releaser>, IPendingOperation
{
    /// <summary>The continuation queued in the holder's region; recognisable by reference, so a dropped one ends the holding.</summary>
    public static readonly SendOrPostCallback ResumeCallback = static state => ((LockWaiter)state!).InvokeContinuation();

    private static readonly Action<object?> s_completed = static _ => { };
    private static readonly Action<object?> s_resume = static state => ((LockWaiter)state!).InvokeContinuation();

    private readonly PrioritySemaphore _owner;
    private Action<object?>? _continuation;
    private object? _continuationState;
    private object? _scheduling;
    private ExecutionContext? _executionContext;
    private bool _granted;
    private ExceptionDispatchInfo? _error;
    private int _done;
    private CancellationTokenRegistration _cancellation;
    private ITimer? _timer;
    private ITimer? _reportTimer;

    public LockWaiter(PrioritySemaphore owner, PrioritySynchronizationContext? context, long sequence, long since)
    {
        _owner = owner;
        Context = context;
        Sequence = sequence;
        WaitingSince = since;
    }

    /// <summary>The waiting code's context, when it runs on a priority scheduler: its level ranks the wait and raises the holders.</summary>
    public PrioritySynchronizationContext? Context { get; }

    /// <summary>The order of arrival, for FIFO within a level.</summary>
    public long Sequence { get; }

    /// <summary>When the wait began (a Stopwatch timestamp), for the report of a long wait.</summary>
    public long WaitingSince { get; }

    /// <summary>The waits this lends to the holders, one per holder's region on the waiter's scheduler. Owner's lock.</summary>
    public List<WaitEdge>? Edges { get; set; }

    /// <summary>The region a grant made this waiter hold: its continuation runs there. Set under the owner's lock, before completion.</summary>
    public FlowContext? HoldContext { get; set; }

    /// <summary>The holding's number, for a <see cref="PriorityLock"/>'s releaser.</summary>
    public long Generation { get; set; }

    /// <summary>Whether the granted holding named its holder in the region's field ([X-LOCK-FAST]); otherwise the holder is the region's
    /// parent in the graph.</summary>
    public bool Claimed { get; set; }

    /// <summary>The level the wait ranks at now: the waiting code's effective level, or 0 off every priority scheduler.</summary>
    public int Rank => Context?.EffectiveLevel ?? 0;

    /// <summary>Registers the cancellation, the timeout and, on a scheduler with a stall timeout, the report of a long wait ([X-SEEN]),
    /// after the waiter was queued (outside the owner's lock: each may fire at once).</summary>
    public void Watch(TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (Context?.Scheduler is { StallTimeout: { } stall } scheduler)
        {
            _reportTimer = scheduler.TimeProvider.CreateTimer(
                static state => ((LockWaiter)state!)._owner.ReportLongWait((LockWaiter)state!), this, stall, Timeout.InfiniteTimeSpan);
        }

        if (cancellationToken.CanBeCanceled)
        {
            _cancellation = cancellationToken.UnsafeRegister(
                static (state, token) => ((LockWaiter)state!)._owner.CancelWait((LockWaiter)state!, token), this);
        }

        if (timeout != Timeout.InfiniteTimeSpan)
        {
            TimeProvider clock = Context?.Scheduler.TimeProvider ?? TimeProvider.System; // a loop's own timer: a starved pool does not delay it
            _timer = clock.CreateTimer(static state => ((LockWaiter)state!)._owner.TimeOutWait((LockWaiter)state!), this, timeout, Timeout.InfiniteTimeSpan);
        }
    }

    /// <summary>Completes the wait: granted (the caller holds now), timed out (<paramref name="granted"/> false), or failed.</summary>
    public void Complete(bool granted, Exception? error = null)
    {
        _granted = granted;
        _error = error is null ? null : ExceptionDispatchInfo.Capture(error);
        Volatile.Write(ref _done, 1);
        _cancellation.Dispose();
        _timer?.Dispose();
        _reportTimer?.Dispose();
        Action<object?>? continuation = Interlocked.Exchange(ref _continuation, s_completed);
        if (continuation is not null)
        {
            _continuation = continuation;
            Dispatch();
        }
    }

    /// <summary>[E-END], step 3: the waiting code's scheduler ended while it waited (nothing would resume it there): the wait ends with
    /// <see cref="ObjectDisposedException"/>, unless a grant, a cancellation or the timeout came first.</summary>
    void IPendingOperation.AbandonAtEnd()
    {
        PriorityScheduler scheduler = Context!.Scheduler;
        _owner.AbandonWait(this, new ObjectDisposedException(
            scheduler.Name,
            $"{scheduler.SubjectAtStart} ended ({scheduler.State}) while code at level {Context.Level} waited for {_owner.Subject}; the wait was abandoned."));
    }

    /// <summary>The scheduler dropped the queued continuation of a granted wait (it finished): the holding ends, so the lock is not
    /// held for ever, and the awaiting code resumes on the thread pool, where the await throws ([X-LOCK]).</summary>
    public void OnResumeDropped()
    {
        _error = ExceptionDispatchInfo.Capture(new ObjectDisposedException(
            HoldContext?.Scheduler.Name,
            $"{HoldContext?.Scheduler.SubjectAtStart} finished before the code that was granted {_owner.Subject} could resume; the holding was released."));
        _owner.ReleaseDropped(this);
        ThreadPool.UnsafeQueueUserWorkItem(s_resume, this, preferLocal: false);
    }

    public ValueTaskSourceStatus GetStatus(short token) =>
        Volatile.Read(ref _done) == 0 ? ValueTaskSourceStatus.Pending
        : _error is null ? ValueTaskSourceStatus.Succeeded
        : _error.SourceException is OperationCanceledException ? ValueTaskSourceStatus.Canceled
        : ValueTaskSourceStatus.Faulted;

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        if ((flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) != 0)
        {
            _executionContext = ExecutionContext.Capture();
        }

        if ((flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) != 0)
        {
            if (SynchronizationContext.Current is { } context && context.GetType() != typeof(SynchronizationContext))
            {
                _scheduling = context;
            }
            else if (TaskScheduler.Current is { } scheduler && scheduler != TaskScheduler.Default)
            {
                _scheduling = scheduler;
            }
        }

        _continuationState = state;
        if (Interlocked.CompareExchange(ref _continuation, continuation, null) is not null)
        {
            _continuation = continuation; // completed meanwhile
            Dispatch();
        }
    }

    void IValueTaskSource.GetResult(short token) => End();

    bool IValueTaskSource<bool>.GetResult(short token)
    {
        End();
        return _granted;
    }

    PriorityLock.Releaser IValueTaskSource<PriorityLock.Releaser>.GetResult(short token)
    {
        End();
        return new PriorityLock.Releaser(_owner, Generation);
    }

    /// <summary>Ends the await: throws the wait's exception; or, for a grant that came before the awaiting code registered its
    /// continuation (so the await goes on at once, in the context it waited from), enters the region there, as an uncontended take
    /// does ([X-LOCK]). A continuation queued in the region is in it already.</summary>
    private void End()
    {
        _error?.Throw();
        if (_granted && HoldContext is { } hold && Context is { } waitedFrom && ReferenceEquals(SynchronizationContext.Current, waitedFrom))
        {
            SynchronizationContext.SetSynchronizationContext(hold);
        }
    }

    /// <summary>Runs the continuation where the awaiting code must go on: a granted wait on a scheduler in its region ([X-LOCK]);
    /// otherwise where it would have without us (the captured context or scheduler, else the thread pool).</summary>
    private void Dispatch()
    {
        if (_granted && _error is null && HoldContext is { } hold && _scheduling is PrioritySynchronizationContext)
        {
            hold.QueueItem(new WorkItem(ResumeCallback, this, ExecutionContextFlow.Of(_executionContext)));
            return;
        }

        switch (_scheduling)
        {
            case SynchronizationContext context:
                context.Post(static state => ((LockWaiter)state!).InvokeContinuationInContext(), this);
                break;
            case TaskScheduler scheduler:
                _ = Task.Factory.StartNew(
                    static state => ((LockWaiter)state!).InvokeContinuationInContext(), this, CancellationToken.None, TaskCreationOptions.DenyChildAttach, scheduler);
                break;
            default:
                ThreadPool.UnsafeQueueUserWorkItem(static state => state.InvokeContinuationInContext(), this, preferLocal: false);
                break;
        }
    }

    private void InvokeContinuation() => _continuation!(_continuationState);

    private void InvokeContinuationInContext()
    {
        if (_executionContext is { } executionContext)
        {
            ExecutionContext.Run(executionContext, static state => ((LockWaiter)state!).InvokeContinuation(), this);
        }
        else
        {
            InvokeContinuation();
        }
    }
}
