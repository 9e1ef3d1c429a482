namespace PriorityAsync;

/// <summary>The life cycle of a <see cref="PriorityContext"/>.</summary>
public enum PriorityContextState
{
    /// <summary>Created; work can be queued but nothing runs until the loop starts.</summary>
    NotStarted,

    /// <summary>The loop is running (or parked, waiting for work).</summary>
    Running,

    /// <summary>The loop finished normally: all operations completed and the queues were empty. Later posts are dropped and reported.</summary>
    Completed,

    /// <summary>The loop stopped because an exception escaped a callback and no <see cref="PriorityContext.UnhandledException"/> handler handled it.</summary>
    Faulted,
}
