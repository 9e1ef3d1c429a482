using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>A <see cref="TaskScheduler"/> that runs tasks on a <see cref="PriorityThreadPool"/> at one level. One cached instance per level.</summary>
/// <remarks>Tasks are queued FIFO with everything else posted at the level and run with that level's
/// <see cref="PriorityThreadPoolSynchronizationContext"/> current. Inlining on a pool thread is allowed only when nothing this thread
/// may run waits above the level and, on a capped level, the level has room for the inlined task, which uses a slot of the level for
/// its run only (the caller keeps its own; at the caller's own level the task shares the caller's). <see cref="MaximumConcurrencyLevel"/>
/// is the level's cap (<see cref="PriorityThreadPool.GetMaxConcurrency(int)"/>).</remarks>
public sealed class PriorityThreadPoolTaskScheduler : TaskScheduler
{
    private readonly SendOrPostCallback _executeTask;
    private readonly Func<Task, bool> _tryExecuteTask;

    internal PriorityThreadPoolTaskScheduler(PriorityThreadPool pool, int level)
    {
        Pool = pool;
        Level = level;

        // One delegate per scheduler, cached: queueing a task allocates nothing beyond the Task itself.
        _executeTask = state => TryExecuteTask((Task)state!);
        _tryExecuteTask = TryExecuteTask;
    }

    /// <summary>Gets the pool the tasks run on.</summary>
    public PriorityThreadPool Pool { get; }

    /// <summary>Gets the level the tasks run at.</summary>
    public int Level { get; }

    /// <summary>Gets the most tasks of this level that run at once: the level's cap, at most the thread count.</summary>
    public override int MaximumConcurrencyLevel => Pool.GetMaxConcurrency(Level);

    /// <summary>Queues <paramref name="task"/> at this level.</summary>
    /// <param name="task">The task.</param>
    /// <exception cref="ObjectDisposedException">The pool has finished (the task is then faulted through <see cref="TaskSchedulerException"/>).</exception>
    protected override void QueueTask(Task task)
    {
        if (Pool.IsFinished)
        {
            throw SchedulerOperations.TaskAfterFinish(nameof(PriorityThreadPool), Pool.Name, Pool.State, Level);
        }

        Pool.Enqueue(Level, _executeTask, task, executionContext: null); // a task runs in its own ExecutionContext (E1)
    }

    /// <summary>Runs <paramref name="task"/> inline on a pool thread when nothing this thread may run waits above the level and, if
    /// the level is capped, it has room for the task's run (which holds a slot of the level until the task returns; the caller keeps
    /// its own).</summary>
    /// <param name="task">The task.</param>
    /// <param name="taskWasPreviouslyQueued">Whether the task is also queued.</param>
    /// <returns>Whether the task ran.</returns>
    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) => Pool.TryRunTaskInline(Level, _tryExecuteTask, task);

    /// <summary>For debuggers: the tasks waiting at this level, oldest first.</summary>
    /// <returns>A snapshot of the queued tasks.</returns>
    protected override IEnumerable<Task> GetScheduledTasks() => Pool.Queues.ScheduledTasks(Level, _executeTask);

    /// <summary>Describes the scheduler.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Pool.Name} level {Level} scheduler";
}
