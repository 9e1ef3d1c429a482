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
internal abstract class WorkOperation<TResult> : TaskCompletionSource<TResult>, INamedWork, IChainable, IChainWaiter, IPendingOperation
{
    private static readonly Action<Task, object?> s_onWorkCompleted = static (_, state) => ((WorkOperation<TResult>)state!).OnWorkCompleted();

    private readonly bool _hasResult;
    private Delegate? _work; // until the work has ended (it names the work while it waits), then cleared to let the closure go
    private Task? _pending;
    private CompletionChain _chain;
    private int _ended; // 1 once the pending work's end, or the scheduler's ([E-END]), has completed the task: the other does nothing

    /// <param name="node">What the work runs in and is raised with ([X-JOIN]): its flow, or its controller. It is the returned task's
    /// <see cref="Task.AsyncState"/>, so a wait on the task finds it.</param>
    /// <param name="work">The delegate; <see cref="StartWork"/> calls it.</param>
    /// <param name="hasResult">Whether the delegate's task is a <see cref="Task{TResult}"/> whose result the returned task carries.</param>
    protected WorkOperation(IEscalationNode node, Delegate work, bool hasResult)
        : base(node, TaskCreationOptions.RunContinuationsAsynchronously) // the caller's continuations never run on the scheduler's thread by accident
    {
        _work = work;
        _hasResult = hasResult;
    }

    /// <summary>Whether the delegate's task is a <see cref="Task{TResult}"/> whose result the returned task carries.</summary>
    protected bool HasResult => _hasResult;

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

        Task? task;
        try
        {
            task = StartWork(work);
        }
        catch (OperationCanceledException ex)
        {
            // As an async method would: a cancellation thrown before the first await cancels the task.
            _work = null;
            TrySetCanceled(ex.CancellationToken);
            Finished(work, null);
            return;
        }
        catch (Exception ex)
        {
            _work = null;
            TrySetException(ex);
            Finished(work, null);
            return;
        }

        if (task is null)
        {
            _work = null;
            TrySetException(new InvalidOperationException(NullTaskMessage()));
            Finished(work, null);
            return;
        }

        if (task.IsCompleted)
        {
            _work = null;
            CompleteFrom(task);
            Finished(work, task);
            return;
        }

        Hold();
        _pending = task;

        Scheduler.TrackPending(this); // an end that drops the work's continuation completes the task ([E-END], step 3)

        // Inline on the thread that completes the work's task (the scheduler's, usually): an awaiter's continuation (ConfigureAwait(false))
        // would be sent to the thread pool from a thread with a SynchronizationContext, so a starved pool would hold up the work's end. A
        // task the library completes itself runs its continuations asynchronously; its completion chain calls us inline instead.
        if (!CompletionChain.TryChain(task, this))
        {
            _ = task.ContinueWith(s_onWorkCompleted, this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    /// <summary>A library waiter of this operation's task (another operation whose work returned it) is called inline at its end.</summary>
    public bool TryChain(Task task, IChainWaiter waiter) => _chain.TryTake(task, waiter);

    void IChainWaiter.OnChainedTaskCompleted() => OnWorkCompleted();

    /// <summary>After the returned task was completed, whoever completed it: the waits on the work end ([X-JOIN]), and a chained library
    /// waiter goes on. Every path that completes the task calls it (here, and the subclasses' drops and cancellations).</summary>
    private protected void OnTaskCompleted()
    {
        Joins.Ended((IEscalationNode)Task.AsyncState!, Task);
        _chain.Run();
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
        OnTaskCompleted();
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
            // The work has ended on another thread and OnWorkCompleted has not run there yet: the task takes the work's outcome, as it
            // would have.
            EndWithWork();
            return;
        }

        _pending = null;
        _work = null;
        PriorityScheduler scheduler = Scheduler;
        TrySetException(new ObjectDisposedException(
            scheduler.Name,
            $"{scheduler.SubjectAtStart} ended ({scheduler.State}) while the work passed to {Kind} at level {Level} was waiting to resume, " +
            "and dropped what the work had queued: the rest of the work did not run."));
        OnTaskCompleted();
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
        Delegate work = _work!;
        _pending = null;
        _work = null;
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
