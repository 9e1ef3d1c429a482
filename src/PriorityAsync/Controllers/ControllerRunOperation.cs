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
internal sealed class ControllerRunOperation<TResult> : WorkOperation<TResult>, IControllerRun
{
    private static readonly Action<object?> s_onCancelled = static state =>
    {
        var operation = (ControllerRunOperation<TResult>)state!;
        operation.TrySetCanceled(operation._controller.Token);
        operation.OnTaskCompleted();
    };

    private readonly PriorityTaskController _controller;
    private CancellationTokenRegistration _registration;

    public ControllerRunOperation(PriorityTaskController controller, Delegate work, bool hasResult)
        : base(controller.Node, work, hasResult)
    {
        _controller = controller;
    }

    protected override string Kind => "PriorityTaskController.Run";

    protected override PriorityScheduler Scheduler => _controller.Context;

    protected override int Level => _controller.Level;

    public void Abandon(DropReason reason)
    {
        if (reason == DropReason.Cancelled)
        {
            TrySetCanceled(_controller.Token);
        }
        else
        {
            PriorityContext context = _controller.Context;
            TrySetException(new ObjectDisposedException(
                context.Name,
                $"{context.SubjectAtStart} finished ({context.State}) before the work passed to PriorityTaskController.Run could run; the work did not run."));
        }

        OnTaskCompleted();
    }

    protected override string NullTaskMessage() =>
        $"The delegate passed to PriorityTaskController.Run ({_controller}) returned null instead of a Task.";

    // Held until the work's task completes, through the controller (released by Cancel, [C-CONTROLLER]); a cancelled controller
    // cancels the task at once, since the work's continuations are dropped from then on.
    protected override void Hold()
    {
        _controller.OperationStarted();
        _registration = _controller.Token.UnsafeRegister(s_onCancelled, this);
    }

    protected override void Release()
    {
        _registration.Dispose();
        _controller.OperationCompleted();
    }
}
