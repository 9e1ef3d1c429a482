namespace PriorityAsync;

/// <summary>Why a queued callback did not run.</summary>
public enum DropReason
{
    /// <summary>It was posted after the context had finished (or while it was finishing), so no loop was left to run it.</summary>
    PostedAfterCompletion,

    /// <summary>It was queued when the loop stopped because of an unhandled exception.</summary>
    AbandonedAfterFault,
}
