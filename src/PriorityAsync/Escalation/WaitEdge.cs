using System;

namespace PriorityAsync.Internal;

/// <summary>
/// One wait in the escalation graph ([X-GRAPH]): code at <see cref="Level"/> (raised further with <see cref="From"/>, the node it runs
/// in, if any) waits on <see cref="To"/>: a join of a <see cref="PriorityTask"/>, or a wait on a priority lock whose holder is
/// <see cref="To"/>. Written under the graph's lock.
/// </summary>
internal sealed class WaitEdge(IEscalationNode? from, int level, PriorityScheduler scheduler, IEscalationNode? to, object cause)
{
    /// <summary>The node the waiting code runs in (its floor raises the wait), or null: code outside any flow, at a fixed level.</summary>
    public IEscalationNode? From { get; } = from;

    /// <summary>The waiting code's own level.</summary>
    public int Level { get; } = level;

    /// <summary>The scheduler the waiting code runs on: its levels raise only nodes of the same scheduler (the levels of two schedulers
    /// are not comparable).</summary>
    public PriorityScheduler Scheduler { get; } = scheduler;

    /// <summary>What the code waits on now; a lock wait moves to the next holder at a grant, and to nothing while no holder can be
    /// raised.</summary>
    public IEscalationNode? To { get; set; } = to;

    /// <summary>What is awaited: the task of a join, or the lock (for diagnostics).</summary>
    public object Cause { get; } = cause;

    /// <summary>The level this wait raises <see cref="To"/> to.</summary>
    public int Value => Math.Max(Level, From?.Floor ?? -1);
}
