using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A <see cref="TaskScheduler"/> that runs tasks on a <see cref="PriorityContext"/> at one level. One cached instance per level.
/// </summary>
/// <remarks>
/// <para>Tasks are queued at the scheduler's level, in FIFO order with everything else posted at that level, and run on the loop thread
/// with that level's <see cref="PrioritySynchronizationContext"/> current, so their awaits come back at the same level.</para>
/// <para>Inlining (for example <see cref="Task.Wait()"/> or <c>RunSynchronously</c> on the loop thread) is allowed only when no more urgent
/// work is queued, so a task never overtakes work queued at a higher level. <see cref="MaximumConcurrencyLevel"/> is 1.</para>
/// </remarks>
public sealed class PriorityTaskScheduler : TaskScheduler
{
    private readonly SendOrPostCallback _executeTask;
    private readonly Func<Task, bool> _tryExecuteTask;

    internal PriorityTaskScheduler(PriorityContext context, int level)
    {
        Context = context;
        Level = level;

        // One delegate per scheduler, cached: queueing a task allocates nothing beyond the Task itself.
        _executeTask = state => TryExecuteTask((Task)state!);
        _tryExecuteTask = TryExecuteTask;
    }

    /// <summary>Gets the context the tasks run on.</summary>
    public PriorityContext Context { get; }

    /// <summary>Gets the level the tasks run at.</summary>
    public int Level { get; }

    /// <summary>Gets 1: tasks run one at a time, on the loop thread.</summary>
    public override int MaximumConcurrencyLevel => 1;

    /// <summary>Queues <paramref name="task"/> at this scheduler's level.</summary>
    /// <param name="task">The task to run.</param>
    /// <exception cref="ObjectDisposedException">The context has finished. <see cref="TaskFactory.StartNew(Action)"/> then throws a
    /// <see cref="TaskSchedulerException"/> wrapping it and the task is faulted (a continuation task is faulted), instead of a task that
    /// would never complete. A task queued while the context is finishing may still be dropped (reported through
    /// <see cref="PriorityContext.WorkDropped"/> with the task as its state).</exception>
    protected override void QueueTask(Task task)
    {
        if (Context.IsFinished)
        {
            throw SchedulerOperations.TaskAfterFinish(nameof(PriorityContext), Context.Name, Context.State, Level);
        }

        Context.Enqueue(Level, _executeTask, task);
    }

    /// <summary>Runs <paramref name="task"/> inline when on the loop thread and no work is queued at a higher level.</summary>
    /// <param name="task">The task.</param>
    /// <param name="taskWasPreviouslyQueued">Whether the task is also in the queue (the queued copy then does nothing when it comes up).</param>
    /// <returns>Whether the task ran.</returns>
    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued)
    {
        if (!Context.CanRunInlineAt(Level))
        {
            return false;
        }

        return InlineAt.RunTask(Context.GetSynchronizationContext(Level), _tryExecuteTask, task);
    }

    /// <summary>For debuggers: the tasks waiting at this level, oldest first.</summary>
    /// <returns>A snapshot of the queued tasks.</returns>
    protected override IEnumerable<Task> GetScheduledTasks() => Context.Queues.ScheduledTasks(Level, _executeTask);

    /// <summary>Describes the scheduler.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Context.Name} level {Level} scheduler";
}
