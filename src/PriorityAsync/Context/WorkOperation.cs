using System;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// The part <see cref="InvokeOperation{TResult}"/> and <see cref="ControllerRunOperation{TResult}"/> share: run the delegate on the loop
/// thread, hand back a task that completes as the delegate's own task does (unwrapped), and hold the loop open while that task is
/// pending. The subclasses decide who holds (the context, or a controller) and what a null task is reported as.
/// </summary>
/// <remarks>Invariant: once <see cref="Run"/> has run, the returned task completes, and a hold taken by <see cref="Hold"/> is released
/// by <see cref="Release"/> exactly once, after the task was completed (so an awaiter inside the context posts its continuation while
/// the hold still keeps the loop alive).</remarks>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal abstract class WorkOperation<TResult> : TaskCompletionSource<TResult>
{
    private readonly bool _hasResult;
    private Func<Task>? _work;
    private Func<Task<TResult>>? _typedWork;
    private Task? _pending;

    protected WorkOperation(Func<Task>? work, Func<Task<TResult>>? typedWork)
        : base(TaskCreationOptions.RunContinuationsAsynchronously) // the caller's continuations never run on the loop thread by accident
    {
        _work = work;
        _typedWork = typedWork;
        _hasResult = typedWork is not null;
    }

    /// <summary>Runs the delegate (on the loop thread).</summary>
    public void Run()
    {
        Func<Task>? work = _work;
        Func<Task<TResult>>? typedWork = _typedWork;
        _work = null;
        _typedWork = null;

        Task? task;
        try
        {
            task = typedWork is not null ? typedWork() : work!();
        }
        catch (OperationCanceledException ex)
        {
            // As an async method would: a cancellation thrown before the first await cancels the task.
            TrySetCanceled(ex.CancellationToken);
            return;
        }
        catch (Exception ex)
        {
            TrySetException(ex);
            return;
        }

        if (task is null)
        {
            TrySetException(new InvalidOperationException(NullTaskMessage()));
            return;
        }

        if (task.IsCompleted)
        {
            CompleteFrom(task);
            return;
        }

        Hold();
        _pending = task;
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(OnWorkCompleted);
    }

    /// <summary>The message of the <see cref="InvalidOperationException"/> when the delegate returned null.</summary>
    protected abstract string NullTaskMessage();

    /// <summary>Takes the hold that keeps the loop alive while the work's task is pending (on the loop thread, while the loop runs).</summary>
    protected abstract void Hold();

    /// <summary>Releases the hold, after the task was completed.</summary>
    protected abstract void Release();

    private void OnWorkCompleted()
    {
        Task task = _pending!;
        _pending = null;

        // Complete first, release second (see the invariant).
        CompleteFrom(task);
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
