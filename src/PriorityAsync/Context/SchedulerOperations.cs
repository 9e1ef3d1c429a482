using System;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>What both schedulers do the same way around their items: release an outstanding operation, and raise an unhandled
/// exception to the handlers to decide whether the scheduler faults.</summary>
internal static class SchedulerOperations
{
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
