using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Tracing;

namespace PriorityAsync.Internal;

/// <summary>
/// The <c>PriorityAsync</c> event source: a start and a stop event around every work item the loop runs, for <c>dotnet-trace</c>,
/// PerfView and in-process <see cref="EventListener"/>s. Off (and free) until a session enables it.
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

    /// <summary>The loop starts a work item.</summary>
    /// <param name="context">The context's name.</param>
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

    /// <summary>The loop finished a work item (it returned, threw, or reached an await that did not complete at once).</summary>
    /// <param name="context">The context's name.</param>
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

    /// <inheritdoc/>
    protected override void OnEventCommand(EventCommandEventArgs command)
    {
        s_isOn = IsEnabled();
        ContextRegistry.Refresh();
    }
}
