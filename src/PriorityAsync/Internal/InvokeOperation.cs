using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One <see cref="PriorityContext.InvokeAsync(Func{Task}, int)"/> call: the delegate, and the task handed back to the caller, which
/// completes as the delegate's own task does (unwrapped). One object per call (plus the task it owns); one more delegate only when
/// the work completes asynchronously.
/// </summary>
/// <remarks>
/// Invariant: the returned task always completes. The operation is either run by the loop (the task then follows the delegate's
/// task), or dropped by the context (<see cref="Abandon"/> faults it). While the delegate's task is pending, the operation holds one
/// outstanding operation on the context, as an <c>async void</c> method does, so the loop cannot finish and drop the continuations
/// the work still has to run.
/// </remarks>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal sealed class InvokeOperation<TResult> : TaskCompletionSource<TResult>, IInvokeOperation
{
    private readonly PriorityContext _context;
    private readonly int _level;
    private readonly bool _hasResult;
    private Func<Task>? _work;
    private Func<Task<TResult>>? _typedWork;
    private Task? _pending;

    public InvokeOperation(PriorityContext context, int level, Func<Task>? work, Func<Task<TResult>>? typedWork)
        : base(TaskCreationOptions.RunContinuationsAsynchronously) // the caller's continuations never run on the loop thread by accident
    {
        _context = context;
        _level = level;
        _work = work;
        _typedWork = typedWork;
        _hasResult = typedWork is not null;
    }

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
            TrySetException(new InvalidOperationException(
                $"The delegate passed to PriorityContext.InvokeAsync (PriorityContext '{_context.Name}', level {_level}) returned null instead of a Task."));
            return;
        }

        if (task.IsCompleted)
        {
            CompleteFrom(task);
            return;
        }

        // Held until the work's task completes (see the invariant). On the loop thread, while the loop runs: it cannot have finished.
        _context.OperationStarted();
        _pending = task;
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(OnWorkCompleted);
    }

    public void Abandon() =>
        TrySetException(new ObjectDisposedException(
            _context.Name,
            $"The PriorityContext '{_context.Name}' finished ({_context.State}) before the work passed to InvokeAsync at level {_level} could run; the work did not run."));

    private void OnWorkCompleted()
    {
        Task task = _pending!;
        _pending = null;

        // Complete first, release second: an awaiter inside the context posts its continuation while the hold still keeps the loop alive.
        CompleteFrom(task);
        _context.OperationCompleted();
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
