using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Tracing;

namespace PriorityAsync.Internal;

/// <summary>
/// The <c>PriorityAsync</c> event source: a start and a stop event around every work item a scheduler runs, and a warning for every
/// faulted piece of work, dropped item and stall, for <c>dotnet-trace</c>, PerfView and in-process <see cref="EventListener"/>s. Off
/// (and free) until a session enables it.
/// </summary>
[EventSource(Name = "PriorityAsync")]
internal sealed class PriorityEventSource : EventSource
{
    public static readonly PriorityEventSource Log = new();

    private static volatile bool s_isOn;

    private PriorityEventSource()
    {
    }

    /// <summary>Whether any session enables the source. Set from OnEventCommand, which may run before <see cref="Log"/> is assigned.</summary>
    public static bool IsOn => s_isOn;

    /// <summary>A scheduler thread starts a work item.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    /// <param name="method">The callback's target, as <c>Type.Method</c> (an async method's continuation names the async method).</param>
    [Event(1, Level = EventLevel.Informational, Message = "{0}: level {1} starts {2}")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkItemStart(string context, int level, string method)
    {
        fixed (char* contextChars = context)
        fixed (char* methodChars = method)
        {
            EventData* data = stackalloc EventData[3];
            data[0] = new EventData { DataPointer = (nint)contextChars, Size = (context.Length + 1) * sizeof(char) };
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = new EventData { DataPointer = (nint)methodChars, Size = (method.Length + 1) * sizeof(char) };
            WriteEventCore(1, 3, data);
        }
    }

    /// <summary>A scheduler thread finished a work item (it returned, threw, or reached an await that did not complete at once).</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    [Event(2, Level = EventLevel.Informational, Message = "{0}: level {1} done")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkItemStop(string context, int level)
    {
        fixed (char* contextChars = context)
        {
            EventData* data = stackalloc EventData[2];
            data[0] = new EventData { DataPointer = (nint)contextChars, Size = (context.Length + 1) * sizeof(char) };
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            WriteEventCore(2, 2, data);
        }
    }

    /// <summary>Work started with a delegate (InvokeAsync, a controller's Run, a scope's child) ended with an exception.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The work's level.</param>
    /// <param name="kind">How the work was started.</param>
    /// <param name="method">The work, as <c>Type.Method</c>.</param>
    /// <param name="exceptionType">The exception's full type name.</param>
    /// <param name="exceptionMessage">The exception's message.</param>
    [Event(3, Level = EventLevel.Warning, Message = "{0}: {2} {3} at level {1} faulted with {4}: {5}")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkFaulted(string context, int level, string kind, string method, string exceptionType, string exceptionMessage)
    {
        fixed (char* contextChars = context)
        fixed (char* kindChars = kind)
        fixed (char* methodChars = method)
        fixed (char* typeChars = exceptionType)
        fixed (char* messageChars = exceptionMessage)
        {
            EventData* data = stackalloc EventData[6];
            data[0] = String(contextChars, context);
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = String(kindChars, kind);
            data[3] = String(methodChars, method);
            data[4] = String(typeChars, exceptionType);
            data[5] = String(messageChars, exceptionMessage);
            WriteEventCore(3, 6, data);
        }
    }

    /// <summary>An item will never run (see <see cref="PriorityScheduler.WorkDropped"/>); written on the thread that dropped it.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    /// <param name="reason">Why, in snake case (<c>posted_after_completion</c>, <c>abandoned_after_fault</c>, <c>cancelled</c>,
    /// <c>timer_armed_at_finish</c>).</param>
    /// <param name="method">The code the item would have run, as <c>Type.Method</c>.</param>
    [Event(4, Level = EventLevel.Warning, Message = "{0}: level {1} dropped {3} ({2})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkDropped(string context, int level, string reason, string method)
    {
        fixed (char* contextChars = context)
        fixed (char* reasonChars = reason)
        fixed (char* methodChars = method)
        {
            EventData* data = stackalloc EventData[4];
            data[0] = String(contextChars, context);
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = String(reasonChars, reason);
            data[3] = String(methodChars, method);
            WriteEventCore(4, 4, data);
        }
    }

    /// <summary>The stall watchdog found a scheduler thread starting no item for at least the stall timeout while work waited.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The highest level with waiting work.</param>
    /// <param name="waitingForMilliseconds">How long work has been waiting without the thread starting any item.</param>
    /// <param name="pendingCount">The number of waiting items (due timers included).</param>
    [Event(5, Level = EventLevel.Warning, Message = "{0}: the loop has started no item for {2} ms while {3} items wait (highest level {1})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only a string and numbers are written; nothing to trim.")]
    public unsafe void StallDetected(string context, int level, long waitingForMilliseconds, int pendingCount)
    {
        fixed (char* contextChars = context)
        {
            EventData* data = stackalloc EventData[4];
            data[0] = String(contextChars, context);
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = new EventData { DataPointer = (nint)(&waitingForMilliseconds), Size = sizeof(long) };
            data[3] = new EventData { DataPointer = (nint)(&pendingCount), Size = sizeof(int) };
            WriteEventCore(5, 4, data);
        }
    }

    /// <inheritdoc/>
    protected override void OnEventCommand(EventCommandEventArgs command)
    {
        s_isOn = IsEnabled();
        ContextRegistry.Refresh();
    }

    private static unsafe EventData String(char* chars, string value) =>
        new() { DataPointer = (nint)chars, Size = (value.Length + 1) * sizeof(char) };
}
