using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>A delegate queued by <see cref="PriorityTaskController.Run(Func{Task})"/>.</summary>
internal interface IControllerRun
{
    /// <summary>The queued callback; recognisable by reference, so a dropped operation completes its task instead of leaving it pending.</summary>
    static readonly SendOrPostCallback Callback = static state => ((IControllerRun)state!).Run();

    /// <summary>Runs the delegate on the loop thread.</summary>
    void Run();

    /// <summary>The operation will never run: cancel its task (the controller was cancelled) or fault it (the context finished).</summary>
    void Abandon(DropReason reason);
}

/// <summary>
/// One <see cref="PriorityTaskController.Run(Func{Task})"/> call, as <see cref="InvokeOperation{TResult}"/> is for InvokeAsync, with two
/// differences: the hold that keeps the loop alive while the work is pending is taken through the controller (so <see cref="PriorityTaskController.Cancel"/>
/// can release it), and the task is cancelled when the controller is (the work's continuations are dropped from then on).
/// </summary>
/// <remarks>Invariant: the returned task always completes: it follows the work's task, or is cancelled by the controller's token, or
/// is completed by <see cref="Abandon"/> when the item is dropped.</remarks>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal sealed class ControllerRunOperation<TResult> : TaskCompletionSource<TResult>, IControllerRun
{
    private static readonly Action<object?> s_onCancelled = static state =>
    {
        var operation = (ControllerRunOperation<TResult>)state!;
        operation.TrySetCanceled(operation._controller.Token);
    };

    private readonly PriorityTaskController _controller;
    private readonly bool _hasResult;
    private Func<Task>? _work;
    private Func<Task<TResult>>? _typedWork;
    private Task? _pending;
    private CancellationTokenRegistration _registration;

    public ControllerRunOperation(PriorityTaskController controller, Func<Task>? work, Func<Task<TResult>>? typedWork)
        : base(TaskCreationOptions.RunContinuationsAsynchronously) // the caller's continuations never run on the loop thread by accident
    {
        _controller = controller;
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
                $"The delegate passed to PriorityTaskController.Run ({_controller}) returned null instead of a Task."));
            return;
        }

        if (task.IsCompleted)
        {
            CompleteFrom(task);
            return;
        }

        // Held until the work's task completes, through the controller (released by Cancel: see "Holds" in PriorityTaskController.cs).
        _controller.OperationStarted();
        _pending = task;
        _registration = _controller.Token.UnsafeRegister(s_onCancelled, this);
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(OnWorkCompleted);
    }

    public void Abandon(DropReason reason)
    {
        if (reason == DropReason.Cancelled)
        {
            TrySetCanceled(_controller.Token);
            return;
        }

        PriorityContext context = _controller.Context;
        TrySetException(new ObjectDisposedException(
            context.Name,
            $"The PriorityContext '{context.Name}' finished ({context.State}) before the work passed to PriorityTaskController.Run could run; the work did not run."));
    }

    private void OnWorkCompleted()
    {
        Task task = _pending!;
        _pending = null;
        _registration.Dispose();

        // Complete first, release second: an awaiter inside the context posts its continuation while the hold still keeps the loop alive.
        CompleteFrom(task);
        _controller.OperationCompleted();
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
