using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// A <see cref="TaskScheduler"/> that runs tasks on a priority scheduler (a <see cref="PriorityContext"/> or a
/// <see cref="PriorityThreadPool"/>) at one level. One cached instance per level.
/// </summary>
/// <remarks>
/// <para>Tasks are queued at the scheduler's level, FIFO with everything else posted at that level, and run with that level's
/// <see cref="PrioritySynchronizationContext"/> current, so their awaits come back at the same level.</para>
/// <para>Inlining (<see cref="Task.Wait()"/> or <c>RunSynchronously</c> on a thread of the scheduler) is allowed only when nothing that
/// thread may run waits above the level, so a task never overtakes more urgent work; on a pool with a cap on the level, only when the
/// level has room for the task's run, which uses a slot of the level until it returns (at the caller's own level it shares the
/// caller's). <see cref="MaximumConcurrencyLevel"/> is 1 on a <see cref="PriorityContext"/>, the level's cap on a pool.</para>
/// </remarks>
public sealed class PriorityTaskScheduler : TaskScheduler
{
    private readonly SendOrPostCallback _executeTask;
    private readonly Func<Task, bool> _tryExecuteTask;

    internal PriorityTaskScheduler(PriorityScheduler scheduler, int level)
    {
        Scheduler = scheduler;
        Level = level;

        // One delegate per scheduler, cached: queueing a task allocates nothing beyond the Task itself.
        _executeTask = state => TryExecuteTask((Task)state!);
        _tryExecuteTask = TryExecuteTask;
    }

    /// <summary>Gets the scheduler the tasks run on.</summary>
    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets the level the tasks run at.</summary>
    public int Level { get; }

    /// <summary>Gets the most tasks of this level that run at once: 1 on a <see cref="PriorityContext"/>, the level's cap (at most the
    /// thread count) on a <see cref="PriorityThreadPool"/>.</summary>
    public override int MaximumConcurrencyLevel => Scheduler.GetMaxConcurrencyCore(Level);

    /// <summary>Queues <paramref name="task"/> at this scheduler's level.</summary>
    /// <param name="task">The task to run.</param>
    /// <exception cref="ObjectDisposedException">The scheduler has finished. <see cref="TaskFactory.StartNew(Action)"/> then throws a
    /// <see cref="TaskSchedulerException"/> wrapping it and the task is faulted, instead of a task that would never complete. A task
    /// queued while the scheduler is finishing may still be dropped (reported through <see cref="PriorityScheduler.WorkDropped"/> with
    /// the task as its state).</exception>
    protected override void QueueTask(Task task)
    {
        if (Scheduler.IsFinished)
        {
            // A task has an owner that observes it: fault it rather than drop it (a late Post, which may come from a timer thread, is
            // dropped and counted instead).
            throw new ObjectDisposedException(
                Scheduler.Name,
                $"{Scheduler.SubjectAtStart} has finished ({Scheduler.State}), so a task cannot be queued at level {Level}; the task did not run.");
        }

        Scheduler.Enqueue(Level, _executeTask, task); // a task runs in its own ExecutionContext ([E-FLOW])
    }

    /// <summary>Runs <paramref name="task"/> inline on a thread of the scheduler when nothing that thread may run waits above the level
    /// (and, on a capped pool level, the level has room).</summary>
    /// <param name="task">The task.</param>
    /// <param name="taskWasPreviouslyQueued">Whether the task is also in the queue (the queued copy then does nothing when it comes up).</param>
    /// <returns>Whether the task ran.</returns>
    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) => Scheduler.TryRunTaskInline(Level, _tryExecuteTask, task);

    /// <summary>For debuggers: the tasks waiting at this level, oldest first.</summary>
    /// <returns>A snapshot of the queued tasks.</returns>
    protected override IEnumerable<Task> GetScheduledTasks() => Scheduler.Queues.ScheduledTasks(Level, _executeTask);

    /// <summary>Describes the scheduler.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Scheduler.Name} level {Level} scheduler";
}
