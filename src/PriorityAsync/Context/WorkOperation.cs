using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// The part <see cref="InvokeOperation{TResult}"/>, <see cref="ControllerRunOperation{TResult}"/> and <see cref="ChildOperation{TResult}"/>
/// share: run a delegate on a thread of the scheduler, hand back a task that completes as the delegate's own task does (unwrapped),
/// hold the scheduler open while that task is pending, and report a fault with the work's name. The subclasses decide who holds (the
/// scheduler, a controller, a scope), how the delegate is called, and what a null task is reported as.
/// </summary>
/// <remarks>Invariant: once <see cref="Run"/> has run, the returned task completes; then <see cref="Finished"/> runs exactly once, or, when
/// the scheduler's end completed the task while the work waited ([E-END], step 3), <see cref="OnAbandonedAtEnd"/> does instead; and a
/// hold taken by <see cref="Hold"/> is released by <see cref="Release"/> exactly once, after both (so an awaiter on the scheduler posts its
/// continuation, and a scope counts the end, while the hold still keeps the scheduler alive).</remarks>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal abstract class WorkOperation<TResult> : TaskCompletionSource<TResult>, INamedWork, IPendingOperation
{
    private readonly bool _hasResult;
    private Delegate? _work;
    private Task? _pending;
    private Delegate? _pendingWork;
    private int _ended; // 1 once the pending work's end, or the scheduler's ([E-END]), has completed the task: the other does nothing

    /// <param name="work">The delegate; <see cref="StartWork"/> calls it.</param>
    /// <param name="hasResult">Whether the delegate's task is a <see cref="Task{TResult}"/> whose result the returned task carries.</param>
    protected WorkOperation(Delegate work, bool hasResult)
        : base(TaskCreationOptions.RunContinuationsAsynchronously) // the caller's continuations never run on the scheduler's thread by accident
    {
        _work = work;
        _hasResult = hasResult;
    }

    /// <summary>What a fault report calls the work: <c>"InvokeAsync"</c>, <c>"PriorityTaskController.Run"</c>, <c>"TaskScope child"</c>.</summary>
    protected abstract string Kind { get; }

    /// <summary>The scheduler the work runs on (a context or a pool): it names the work's faults, and completes its task if it ends
    /// while the work waits.</summary>
    protected abstract PriorityScheduler Scheduler { get; }

    /// <summary>The level the work runs at (reported with a fault).</summary>
    protected abstract int Level { get; }

    /// <summary>Names the work for a drop report (before it ran) or a trace.</summary>
    public string Describe() => _work is { } work ? CallbackNames.Describe(work) : Kind;

    /// <summary>Runs the delegate (on a thread of the scheduler).</summary>
    public void Run()
    {
        Delegate work = _work!;
        _work = null; // let the closure go as soon as it has run

        Task? task;
        try
        {
            task = StartWork(work);
        }
        catch (OperationCanceledException ex)
        {
            // As an async method would: a cancellation thrown before the first await cancels the task.
            TrySetCanceled(ex.CancellationToken);
            Finished(work, null);
            return;
        }
        catch (Exception ex)
        {
            TrySetException(ex);
            Finished(work, null);
            return;
        }

        if (task is null)
        {
            TrySetException(new InvalidOperationException(NullTaskMessage()));
            Finished(work, null);
            return;
        }

        if (task.IsCompleted)
        {
            CompleteFrom(task);
            Finished(work, task);
            return;
        }

        Hold();
        _pending = task;
        _pendingWork = work;
        Scheduler.TrackPending(this); // an end that drops the work's continuation completes the task ([E-END], step 3)
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(OnWorkCompleted);
    }

    /// <summary>Calls the delegate. By default a <see cref="Func{TResult}"/> of <see cref="Task"/> or of <see cref="Task{TResult}"/>.</summary>
    protected virtual Task? StartWork(Delegate work) =>
        _hasResult ? ((Func<Task<TResult>>)work)() : ((Func<Task>)work)();

    /// <summary>The message of the <see cref="InvalidOperationException"/> when the delegate returned null.</summary>
    protected abstract string NullTaskMessage();

    /// <summary>Takes the hold that keeps the scheduler alive while the work's task is pending (on its thread, while it runs).</summary>
    protected abstract void Hold();

    /// <summary>Releases the hold, after the task was completed and <see cref="Finished"/> ran.</summary>
    protected abstract void Release();

    /// <summary>
    /// Called once, in every path of <see cref="Run"/>, after the returned task was completed: reports a fault through the
    /// <c>PriorityAsync</c> meter and event source with the work's name, whoever awaits the task (a fault is never silent). Runs on the
    /// thread that completed the work's task (the scheduler's, unless the work ended off it after <c>ConfigureAwait(false)</c>).
    /// </summary>
    /// <param name="work">The delegate, to name the work.</param>
    /// <param name="workTask">The task the delegate returned, or <see langword="null"/> when it threw or returned none.</param>
    protected virtual void Finished(Delegate work, Task? workTask)
    {
        if (Task.Exception is { } fault)
        {
            WorkFaults.Report(Scheduler.Name, Level, Kind, CallbackNames.DescribeWork(work, workTask), fault.InnerExceptions);
        }
    }

    /// <summary>The scheduler's end completed the task while the work waited, instead of <see cref="Finished"/>: a scope counts its
    /// child's end here. Before <see cref="Release"/>.</summary>
    protected virtual void OnAbandonedAtEnd()
    {
    }

    /// <summary>[E-END], step 3: the scheduler ended while the work waited; its continuation was dropped, or will be when it comes.</summary>
    void IPendingOperation.AbandonAtEnd()
    {
        if (Interlocked.Exchange(ref _ended, 1) != 0)
        {
            return; // the work ended by itself first
        }

        if (_pending!.IsCompleted)
        {
            // The work has ended; OnWorkCompleted has not run yet (it cannot run inline under a scheduler's SynchronizationContext, so
            // the runtime queued it to the thread pool). The task takes the work's outcome, as it would have.
            EndWithWork();
            return;
        }

        _pending = null;
        _pendingWork = null;
        PriorityScheduler scheduler = Scheduler;
        TrySetException(new ObjectDisposedException(
            scheduler.Name,
            $"{scheduler.SubjectAtStart} ended ({scheduler.State}) while the work passed to {Kind} at level {Level} was waiting to resume, " +
            "and dropped what the work had queued: the rest of the work did not run."));
        OnAbandonedAtEnd();
        Release();
    }

    private void OnWorkCompleted()
    {
        if (Interlocked.Exchange(ref _ended, 1) != 0)
        {
            return; // the scheduler's end completed the task first ([E-END], step 3); the work went on elsewhere and has now ended
        }

        Scheduler.UntrackPending(this);
        EndWithWork();
    }

    /// <summary>The work's task has completed: complete, report, then release (see the invariant).</summary>
    private void EndWithWork()
    {
        Task task = _pending!;
        Delegate work = _pendingWork!;
        _pending = null;
        _pendingWork = null;
        CompleteFrom(task);
        Finished(work, task);
        Release();
    }

    private void CompleteFrom(Task task)
    {
        if (task.IsCompletedSuccessfully)
        {
            TrySetResult(_hasResult ? ((Task<TResult>)task).Result : default!);
        }
        else if (task.IsCanceled)
        {
            try
            {
                task.GetAwaiter().GetResult();
            }
            catch (OperationCanceledException ex)
            {
                TrySetCanceled(ex.CancellationToken);
                return;
            }

            TrySetCanceled();
        }
        else
        {
            TrySetException(task.Exception!.InnerExceptions);
        }
    }
}
