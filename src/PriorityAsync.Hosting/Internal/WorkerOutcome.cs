using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Hosting.Internal;

/// <summary>The outcome of a priority worker's <c>ExecuteTask</c> once its scheduler stopped: shared by both kinds of worker.</summary>
internal static class WorkerOutcome
{
    /// <summary>
    /// Completes <paramref name="execute"/> when the scheduler stopped (<paramref name="completion"/>): with the scheduler's fault; else
    /// with <c>ExecuteAsync</c>'s outcome (<paramref name="executeAsyncTask"/>); cancelled when <c>ExecuteAsync</c> never completed (the
    /// scheduler was completed from outside) or was cancelled. A no-op when <paramref name="execute"/> already faulted.
    /// </summary>
    public static void SchedulerStopped(TaskCompletionSource execute, Task completion, Task? executeAsyncTask, CancellationToken stoppingToken)
    {
        if (completion.Exception is { } fault)
        {
            execute.TrySetException(fault.InnerExceptions);
        }
        else if (executeAsyncTask is null || executeAsyncTask.IsCanceled)
        {
            execute.TrySetCanceled(stoppingToken);
        }
        else if (executeAsyncTask.Exception is { } executeFault)
        {
            execute.TrySetException(executeFault.InnerExceptions);
        }
        else
        {
            execute.TrySetResult();
        }
    }
}
