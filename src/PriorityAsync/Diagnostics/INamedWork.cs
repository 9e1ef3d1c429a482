namespace PriorityAsync.Internal;

/// <summary>The state of a queued item that can name the user code it runs (for a drop or fault report, and a trace).</summary>
internal interface INamedWork
{
    /// <summary>The code, as <c>Type.Method</c>.</summary>
    string Describe();
}
