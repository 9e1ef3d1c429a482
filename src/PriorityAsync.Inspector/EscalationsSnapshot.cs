using System.Collections.Generic;

namespace PriorityAsync.Inspector;

/// <summary>A scheduler's escalations: those in force now (oldest first), how many ended in the window and the longest of them, and the
/// latest long lock waits of its code (at most 10, newest last).</summary>
internal sealed record EscalationsSnapshot(
    IReadOnlyList<EscalationSnapshot> InForce,
    int EndedInWindow,
    EscalationSnapshot? LongestEnded,
    IReadOnlyList<LockWaitSnapshot> LongLockWaits);
