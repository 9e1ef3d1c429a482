using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>The <see cref="TaskScheduler"/> of one <see cref="PriorityTaskController"/>: tasks are queued under the controller.</summary>
internal sealed class ControllerTaskScheduler : TaskScheduler
{
    private readonly PriorityTaskController _controller;
    private readonly SendOrPostCallback _executeTask;

    public ControllerTaskScheduler(PriorityTaskController controller)
    {
        _controller = controller;

        // One delegate per scheduler, cached: queueing a task allocates nothing beyond the Task itself.
        _executeTask = state => TryExecuteTask((Task)state!);
    }

    public override int MaximumConcurrencyLevel => 1;

    protected override void QueueTask(Task task)
    {
        // As PriorityTaskScheduler: a task has an owner that observes it, so fault it (TaskSchedulerException) rather than drop it.
        _controller.Context.ThrowIfFinished("queueing a task under a PriorityTaskController", _controller.Level);
        _controller.Enqueue(_executeTask, task, executionContext: null); // a task runs in the context it captured itself
    }

    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued)
    {
        int level = _controller.Level;
        if (!_controller.IsOnLoopThreadAndMayInline(level))
        {
            return false;
        }

        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(_controller.SynchronizationContext);
        try
        {
            return TryExecuteTask(task);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    protected override IEnumerable<Task> GetScheduledTasks()
    {
        foreach (WorkItem item in _controller.SnapshotQueue())
        {
            if (item.Callback == _executeTask && item.State is Task task)
            {
                yield return task;
            }
        }
    }

    public override string ToString() => $"{_controller} scheduler";
}
