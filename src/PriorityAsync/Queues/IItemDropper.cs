namespace PriorityAsync.Internal;

/// <summary>What <see cref="LevelQueues.DrainAll"/> hands each item it drains to: the scheduler's own drop (count, report,
/// release), implemented by the single-threaded context and the pool alike.</summary>
internal interface IItemDropper
{
    /// <summary>Counts and reports one item that will never run.</summary>
    void Drop(int level, in WorkItem item, DropReason reason);
}
