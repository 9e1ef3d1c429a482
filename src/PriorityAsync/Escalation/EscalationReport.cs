namespace PriorityAsync.Internal;

/// <summary>Reports escalations ([X-SEEN]): who raised whom, from which level to which, and for how long.</summary>
internal static class EscalationReport
{
    /// <summary>A node's floor changed (graph lock): the report is made after the lock, through <paramref name="batch"/>.</summary>
    public static void FloorChanged(IEscalationNode node, int previous, int floor, object? cause, ref EscalationBatch batch)
    {
    }

    /// <summary>A waiter has waited its scheduler's stall timeout on a lock and still waits ([X-SEEN]).</summary>
    public static void LongLockWait(LockWaiter waiter, string lockName, string holders, bool raised)
    {
    }
}
