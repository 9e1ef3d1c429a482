namespace PriorityAsync.Internal;

/// <summary>
/// The dispatch decision and what it needs around each item. Both schedulers' dispatch is generic over it and only ever instantiated
/// with structs, so the JIT compiles one copy per policy with these calls inlined. Called by the consumer of the queues only (the
/// loop's thread, or a pool thread under the dispatch lock).
/// </summary>
internal interface IDispatchPolicy
{
    /// <summary>Takes the next item among the levels whose bit is set in <paramref name="allowed"/> (the pool's levels below their
    /// cap; the loop passes all, a constant the JIT folds away), or returns <see langword="false"/> when none is queued.</summary>
    bool TryDequeue(LevelQueues queues, ulong allowed, out WorkItem item, out int level);

    /// <summary>A drain starts (after a park, or after an unhandled exception): time before this is nobody's run time.</summary>
    void OnDrainStart();

    /// <summary>The item dequeued at <paramref name="level"/> returned.</summary>
    void OnItemEnd(int level);
}
