using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>What both schedulers do the same way: create their per-level surfaces, release an outstanding operation, and raise an
/// unhandled exception to the handlers to decide whether the scheduler faults.</summary>
internal static class SchedulerOperations
{
    /// <summary>Creates, for each of <paramref name="levels"/> levels, the scheduler's cached synchronization context, task scheduler
    /// and task factory (called once, from the scheduler's constructor; static factories, so nothing is captured).</summary>
    /// <remarks>The factory hides its scheduler inside the tasks it starts (as AsyncEx and Task.Run do): a StartNew or ContinueWith
    /// without a scheduler in such a task goes to the thread pool, not onto the scheduler. The level is carried by await (the
    /// SynchronizationContext), not by TaskScheduler.Current.</remarks>
    public static void CreateLevelSurfaces<TOwner, TContext, TScheduler>(
        TOwner owner,
        int levels,
        Func<TOwner, int, TContext> newContext,
        Func<TOwner, int, TScheduler> newScheduler,
        out TContext[] contexts,
        out TScheduler[] schedulers,
        out TaskFactory[] factories)
        where TScheduler : TaskScheduler
    {
        contexts = new TContext[levels];
        schedulers = new TScheduler[levels];
        factories = new TaskFactory[levels];
        for (int level = 0; level < levels; level++)
        {
            contexts[level] = newContext(owner, level);
            schedulers[level] = newScheduler(owner, level);
            factories[level] = new TaskFactory(
                CancellationToken.None, TaskCreationOptions.HideScheduler, TaskContinuationOptions.HideScheduler, schedulers[level]);
        }
    }

    /// <summary>A member of <see cref="Priority"/> was called by code that runs on neither scheduler: the message names both, how to
    /// get onto each, and what the caller runs on instead.</summary>
    public static InvalidOperationException NotOnEitherScheduler(string operation) =>
        new($"Priority.{operation} can only be used by code running on a PriorityContext or a PriorityThreadPool, and the calling code " +
            $"runs on neither ({DescribeCurrentSynchronizationContext()}). Start the work on a PriorityContext with PriorityContext.Run(...) " +
            "or a PriorityContextThread, or queue it on a PriorityThreadPool with pool.InvokeAsync(...); running code hops onto either " +
            "with await context.Prioritize(level) or await pool.Prioritize(level).");

    /// <summary>What the calling code runs on, for the messages of code that found no priority scheduler: the type of
    /// <see cref="SynchronizationContext.Current"/>, or none.</summary>
    public static string DescribeCurrentSynchronizationContext() =>
        SynchronizationContext.Current is { } current
            ? $"SynchronizationContext.Current is a {current.GetType().FullName}"
            : "SynchronizationContext.Current is null: a thread-pool thread or a thread of its own";

    /// <summary>What a task scheduler of either scheduler throws from <c>QueueTask</c> once its scheduler has finished: the task
    /// then faults through <see cref="TaskSchedulerException"/>, rather than wait forever (a task has an owner that observes it;
    /// a late Post, which may come from a timer thread, is dropped and counted instead).</summary>
    public static ObjectDisposedException TaskAfterFinish(string kind, string name, PriorityContextState state, int level) =>
        new(name, $"The {kind} '{name}' has finished ({state}), so a task cannot be queued at level {level}; the task did not run.");

    /// <summary>Releases one outstanding operation and returns the count before it. A compare-exchange loop rather than Decrement, so
    /// that an unmatched OperationCompleted (public on the synchronization contexts) throws instead of pushing the count below zero,
    /// where "&lt;= 0" would read as "nothing outstanding" for good. CompareExchange is a full fence, as the wake-up protocols need
    /// before they read the parked flags. Not on the hot path: once per async void method or pending InvokeAsync.</summary>
    public static int Release(ref int outstanding, string kind, string name)
    {
        int current = Volatile.Read(ref outstanding);
        while (true)
        {
            if (current <= 0)
            {
                throw new InvalidOperationException(
                    $"OperationCompleted was called on {kind} '{name}' with no operation outstanding (count {current}): each " +
                    "OperationCompleted must match an earlier OperationStarted.");
            }

            int seen = Interlocked.CompareExchange(ref outstanding, current - 1, current);
            if (seen == current)
            {
                return current;
            }

            current = seen;
        }
    }

    /// <summary>Raises <paramref name="handlers"/> for an exception that escaped an item and records it on the meter.</summary>
    /// <returns>null when a handler set Handled (the scheduler goes on); else what faults the scheduler: the exception, or the
    /// exception a handler threw.</returns>
    public static ExceptionDispatchInfo? RaiseUnhandled(
        object sender, EventHandler<PriorityUnhandledExceptionEventArgs>? handlers, string name, Exception exception, int level)
    {
        var args = new PriorityUnhandledExceptionEventArgs(exception, level);
        try
        {
            handlers?.Invoke(sender, args);
        }
        catch (Exception handlerException)
        {
            PriorityMetrics.RecordException(name, level, exception, handled: false);
            return ExceptionDispatchInfo.Capture(handlerException);
        }

        PriorityMetrics.RecordException(name, level, exception, args.Handled);
        return args.Handled ? null : ExceptionDispatchInfo.Capture(exception);
    }
}
