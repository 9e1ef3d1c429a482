using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace PriorityAsync.Internal;

/// <summary>
/// The pooled source behind <see cref="Priority.Delay"/>: one object is both the timer entry in the scheduler's heap and the
/// <see cref="IValueTaskSource"/> the caller awaits, so a steady-state delay allocates nothing ([T-DELAY]: exactly one firing completes
/// it, and the continuation runs exactly once). It goes back to its scheduler's pool in <see cref="GetResult"/>; the version token
/// makes a second await of the same <see cref="ValueTask"/> throw.
/// </summary>
internal sealed class DelaySource : TimerEntry, IValueTaskSource, IThreadPoolWorkItem
{
    private static readonly SendOrPostCallback s_resume = static state => ((DelaySource)state!).InvokeContinuation();
    private static readonly Action<object?> s_cancel = static state => ((DelaySource)state!).OnCancellationRequested();
    private static readonly Action<object?> s_completedSentinel = static _ => { };
    private static readonly ContextCallback s_runInContext = static state => ((DelaySource)state!).InvokeContinuationCore();

    private short _version;
    private Action<object?>? _continuation;
    private object? _continuationState;
    private ExecutionContext? _executionContext;
    private SynchronizationContext? _capturedContext;
    private PrioritySynchronizationContext? _resumeContext;
    private volatile bool _completed;
    private volatile bool _abandoned;
    private Exception? _error;
    private CancellationToken _token;
    private CancellationTokenRegistration _registration;

    public DelaySource(LoopTimers timers)
        : base(timers)
    {
    }

    public short Version => _version;

    /// <summary>Guarded by the timer lock: set when a cancellation took the entry out of the heap.</summary>
    internal bool Canceled { get; set; }

    internal void Prepare(int level, FlowContext? route)
    {
        Level = level;
        Route = route;
        Period = 0;
        Canceled = false;
    }

    /// <summary>After arming, outside the timer lock: may run <see cref="OnCancellationRequested"/> inline if already cancelled.</summary>
    internal void RegisterCancellation(CancellationToken token)
    {
        _token = token;
        _registration = token.UnsafeRegister(s_cancel, this);
    }

    private void OnCancellationRequested()
    {
        if (Timers.CancelDelay(this))
        {
            Host.Enqueue(Level, FireCallback, this, executionContext: null); // a producer's post ([T-DELAY]); after the end, dropped
        }
    }

    protected override void RunFiring()
    {
        Timers.TakeFiring(this);

        // Waits for a cancellation callback that is running on another thread; after it, none runs (it would find the entry gone).
        _registration.Dispose();
        Complete(Canceled ? new TaskCanceledException(null, null, _token) : null);
    }

    public override void OnDropped()
    {
        _registration.Dispose();
        _abandoned = true; // the scheduler is gone: resume on the thread pool
        Complete(new ObjectDisposedException(
            Host.Name,
            $"{Host.SubjectAtStart} finished while Priority.Delay was pending; the delay will never complete on it."));
    }

    private void Complete(Exception? error)
    {
        _error = error;
        _completed = true;
        Action<object?>? continuation = Interlocked.CompareExchange(ref _continuation, s_completedSentinel, null);
        if (continuation is not null)
        {
            Resume(mayRunInline: true);
        }
    }

    private void Resume(bool mayRunInline)
    {
        if (_abandoned)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
        else if (_resumeContext is { } resume)
        {
            if (mayRunInline && Host.IsOnOwnThread && ReferenceEquals(SynchronizationContext.Current, resume))
            {
                InvokeContinuation(); // the usual case: the firing runs where the awaiting method does (its level, or its flow)
            }
            else
            {
                resume.QueueItem(new WorkItem(s_resume, this));
            }
        }
        else if (_capturedContext is not null)
        {
            _capturedContext.Post(s_resume, this);
        }
        else if (mayRunInline)
        {
            InvokeContinuation(); // ConfigureAwait(false): synchronously on the completing thread, as a Task would
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    void IThreadPoolWorkItem.Execute() => InvokeContinuation();

    private void InvokeContinuation()
    {
        if (_executionContext is null)
        {
            InvokeContinuationCore();
        }
        else
        {
            ExecutionContext.Run(_executionContext, s_runInContext, this);
        }
    }

    private void InvokeContinuationCore() => _continuation!(_continuationState);

    public ValueTaskSourceStatus GetStatus(short token)
    {
        ValidateToken(token);
        return !_completed ? ValueTaskSourceStatus.Pending
            : _error is null ? ValueTaskSourceStatus.Succeeded
            : _error is OperationCanceledException ? ValueTaskSourceStatus.Canceled
            : ValueTaskSourceStatus.Faulted;
    }

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        ValidateToken(token);
        if ((flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) != 0)
        {
            _executionContext = ExecutionContext.Capture();
        }

        if ((flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) != 0)
        {
            SynchronizationContext? current = SynchronizationContext.Current;
            // A controller's context is captured as any other context is, so the method resumes through the controller (its level then).
            if (current is not null && Host.IsOwnContext(current))
            {
                _resumeContext = (PrioritySynchronizationContext)current;
            }
            else if (current is not null && current.GetType() != typeof(SynchronizationContext))
            {
                _capturedContext = current;
            }
        }

        _continuationState = state;
        Action<object?>? previous = Interlocked.CompareExchange(ref _continuation, continuation, null);
        if (previous is not null)
        {
            if (!ReferenceEquals(previous, s_completedSentinel))
            {
                throw new InvalidOperationException("A Priority.Delay ValueTask was awaited twice at the same time; await it once.");
            }

            // Completed before we registered: never run a continuation synchronously inside OnCompleted.
            _continuation = continuation;
            Resume(mayRunInline: false);
        }
    }

    public void GetResult(short token)
    {
        ValidateToken(token);
        if (!_completed)
        {
            throw new InvalidOperationException("GetResult was called on a Priority.Delay ValueTask that has not completed; await it instead.");
        }

        Exception? error = _error;
        Reset();
        Timers.ReturnDelay(this);
        if (error is not null)
        {
            ExceptionDispatchInfo.Throw(error);
        }
    }

    private void Reset()
    {
        _version++;
        _continuation = null;
        _continuationState = null;
        _executionContext = null;
        _capturedContext = null;
        _resumeContext = null;
        Route = null;
        _error = null;
        _token = default;
        _registration = default;
        _abandoned = false;
        _completed = false;
    }

    private void ValidateToken(short token)
    {
        if (token != _version)
        {
            throw new InvalidOperationException("This Priority.Delay ValueTask was already awaited: a ValueTask may be awaited only once (call AsTask() to await it more than once).");
        }
    }
}
