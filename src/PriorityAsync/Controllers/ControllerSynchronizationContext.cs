using System;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The <see cref="SynchronizationContext"/> of one <see cref="PriorityTaskController"/>: posts go into the controller's queue, and its
/// level follows the controller's, so an <c>await</c> that captured it comes back through the controller wherever it has moved.
/// </summary>
internal sealed class ControllerSynchronizationContext : PrioritySynchronizationContext
{
    private readonly PriorityTaskController _controller;

    public ControllerSynchronizationContext(PriorityTaskController controller, int level)
        : base(controller.Context, level, controller.Node)
    {
        _controller = controller;
    }

    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        _controller.Enqueue(d, state, ExecutionContextFlow.Capture()); // a plain callback: the poster's context ([E-FLOW])
    }

    /// <summary>On the loop thread: runs inline, under the controller. From another thread: queued under the controller, and the caller
    /// blocks until it ran; if it is dropped instead the caller gets <see cref="OperationCanceledException"/> (the controller was
    /// cancelled) or <see cref="ObjectDisposedException"/> (the context finished).</summary>
    public override void Send(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        PriorityContext context = _controller.Context;
        if (context.IsOnOwnThread)
        {
            SynchronizationContext? previous = Current;
            SetSynchronizationContext(this);
            try
            {
                d(state);
            }
            finally
            {
                SetSynchronizationContext(previous);
            }

            return;
        }

        context.ThrowIfFinished("Send under a PriorityTaskController", Level);
        SendWaiter waiter = SendWaiter.Rent(d, state);
        _controller.Enqueue(SendWaiter.RunCallback, waiter, ExecutionContextFlow.Capture());
        try
        {
            waiter.WaitAndRethrow(context);
        }
        catch (ObjectDisposedException) when (_controller.IsCancelled && !context.IsFinished)
        {
            // Dropped by Cancel, not by the end of the context: say so.
            throw new OperationCanceledException(
                $"The callback sent under {_controller} was dropped: the controller was cancelled before it could run.", _controller.Token);
        }
    }

    internal override void QueueContinuation(Action continuation, bool flowExecutionContext)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        _controller.Enqueue(PriorityScheduler.s_runAction, continuation, flowExecutionContext ? ExecutionContextFlow.Capture() : null);
    }

    public override SynchronizationContext CreateCopy() => this;

    public override void OperationStarted() => _controller.OperationStarted();

    public override void OperationCompleted() => _controller.OperationCompleted();

    public override string ToString() => _controller.ToString();
}
