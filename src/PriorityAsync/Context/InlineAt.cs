using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>Runs a callback or a task inline with a level's <see cref="SynchronizationContext"/> current, then puts the caller's back:
/// the inline <c>Send</c> and the inlined task of both schedulers.</summary>
internal static class InlineAt
{
    public static void Run(SynchronizationContext target, SendOrPostCallback callback, object? state)
    {
        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(target);
        try
        {
            callback(state);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    /// <param name="target">The level's context.</param>
    /// <param name="tryExecuteTask">The scheduler's cached <c>TryExecuteTask</c>.</param>
    /// <param name="task">The task.</param>
    public static bool RunTask(SynchronizationContext target, Func<Task, bool> tryExecuteTask, Task task)
    {
        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(target);
        try
        {
            return tryExecuteTask(task);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }
}
