namespace PriorityAsync.Internal;

/// <summary>
/// Something the scheduler can raise ([X-GRAPH]): a flow of work (<see cref="WorkFlow"/>: an <c>InvokeAsync</c> call, a scope's child,
/// a held lock's region) or a <see cref="PriorityTaskController"/>. Its <see cref="Floor"/> is the level its work runs at at least: the
/// highest level of the code that waits on it (joins, lock waits) and of the nodes it belongs to (its parents), or -1.
/// </summary>
/// <remarks>The floor is written under <see cref="EscalationGraph"/>'s lock only and read anywhere without one (a post reads it once).
/// The rest of a node's part in the graph (<see cref="NodeLinks"/>) exists only once it takes part: most work is never waited on at a
/// higher level and pays one field for it.</remarks>
internal interface IEscalationNode
{
    /// <summary>The scheduler whose levels <see cref="Floor"/> counts in.</summary>
    PriorityScheduler Scheduler { get; }

    /// <summary>The node's own level (the level it was started at), for diagnostics: "raised from 0 to 2".</summary>
    int OwnLevel { get; }

    /// <summary>The level this node's work runs at at least, or -1 when nothing raised it.</summary>
    int Floor { get; }

    /// <summary>The floor as the graph last computed it (what a recompute compares with): <see cref="Floor"/> may be higher by a join
    /// at a fixed level that could change nothing yet, and so needed no recompute ([X-JOIN]).</summary>
    int GraphFloor { get; }

    /// <summary>The level the node is held at without the graph's edges now (the joins of [X-JOIN]: the waiting code's level, or its
    /// flow's floor; the holder of a lock region, [X-LOCK]), or -1.</summary>
    int JoinedLevel { get; }

    /// <summary>What gave <see cref="JoinedLevel"/>, for a report: <see cref="Joins.FixedLevel"/> for a join, a region's holder.</summary>
    object? JoinCause { get; }

    /// <summary>The node's edges, parents and children, created on first use.</summary>
    NodeLinks Links { get; }

    /// <summary>The node's links if it has taken part in the graph, else null.</summary>
    NodeLinks? LinksIfAny { get; }

    /// <summary>Writes the graph's floor. Graph lock only.</summary>
    void SetFloor(int floor);

    /// <summary>Called under the graph's lock when <see cref="Floor"/> changed: move queued work up, tell the owner. What must run
    /// outside the lock (queueing, user-visible events) goes into <paramref name="batch"/>.</summary>
    /// <param name="previous">The floor before.</param>
    /// <param name="floor">The floor now.</param>
    /// <param name="cause">What gave the new floor: the <see cref="WaitEdge"/> or the parent node; null when it dropped to -1.</param>
    /// <param name="batch">What to do after the lock.</param>
    void OnFloorChanged(int previous, int floor, object? cause, ref EscalationBatch batch);

    /// <summary>Names the node's work for diagnostics.</summary>
    string Describe();
}
