namespace PriorityAsync.Internal;

/// <summary>
/// The dispatch decision and what it needs around each item. The loop (<c>PriorityContext.DrainReady</c>) is generic over it and is
/// only ever instantiated with structs, so the JIT compiles one copy of the loop per policy with these calls inlined: strict priority
/// runs the same code as before policies existed, and no policy pays a per-item branch for the others. Loop thread only.
/// </summary>
internal interface IDispatchPolicy
{
    /// <summary>Takes the next item to run, or returns <see langword="false"/> when nothing is queued.</summary>
    bool TryDequeue(LevelQueues queues, out WorkItem item, out int level);

    /// <summary>A drain starts (after a park, or after an unhandled exception): time before this is nobody's run time.</summary>
    void OnDrainStart();

    /// <summary>The item dequeued at <paramref name="level"/> returned.</summary>
    void OnItemEnd(int level);
}
