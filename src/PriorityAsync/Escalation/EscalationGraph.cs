using System.Collections.Generic;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The waits between flows of work, and the floors they imply ([X-GRAPH]): a node's floor is the highest level of the code that waits
/// on it (through a <see cref="WaitEdge"/> of the same scheduler) and of its parents. Every change recomputes the floors it can reach and
/// moves what the raised nodes have queued ([X-MOVE]).
/// </summary>
/// <remarks>One lock for the whole process: escalations are rare (a join of a task not yet done, a contended lock), and one lock keeps
/// a chain across several nodes and locks consistent. Nothing under it runs user code or queues work (that goes into the caller's
/// <see cref="EscalationBatch"/>, run after every lock is released); lock order: a priority lock's own lock, then this one, then a
/// node's or a flow's spin lock.</remarks>
internal static class EscalationGraph
{
    private static readonly Lock s_lock = new();

    // RecomputeLocked's work list, reused under s_lock (a recompute never starts another), so that a change allocates nothing.
    private static readonly Stack<IEscalationNode> s_pending = new();

    /// <summary>Adds a wait: <see cref="WaitEdge.To"/> (and what it waits on) is raised to the waiter's level.</summary>
    public static void Add(WaitEdge edge, ref EscalationBatch batch)
    {
        (edge.From as WorkFlow)?.LinkToHolder(ref batch); // a region that waits: a raise of its holder reaches the wait ([X-LOCK-FAST])
        lock (s_lock)
        {
            if (edge.From is { } from)
            {
                (from.Links.Outgoing ??= []).Add(edge);
            }

            if (edge.To is { } to)
            {
                (to.Links.Incoming ??= []).Add(edge);
                RecomputeLocked(to, ref batch);
            }
        }
    }

    /// <summary>Ends a wait: what it raised drops back unless something else holds it up.</summary>
    public static void Remove(WaitEdge edge, ref EscalationBatch batch)
    {
        lock (s_lock)
        {
            edge.From?.LinksIfAny?.Outgoing?.Remove(edge);
            if (edge.To is { } to)
            {
                to.LinksIfAny?.Incoming?.Remove(edge);
                edge.To = null;
                RecomputeLocked(to, ref batch);
            }
        }
    }

    /// <summary>Ends every wait on <paramref name="node"/> whose cause is <paramref name="cause"/> (the joins of a task that completed).</summary>
    public static void RemoveWaitsFor(IEscalationNode node, object cause, ref EscalationBatch batch)
    {
        lock (s_lock)
        {
            if (node.LinksIfAny?.Incoming is not { Count: > 0 } incoming)
            {
                return;
            }

            bool removed = false;
            for (int i = incoming.Count - 1; i >= 0; i--)
            {
                WaitEdge edge = incoming[i];
                if (ReferenceEquals(edge.Cause, cause))
                {
                    incoming.RemoveAt(i);
                    edge.From?.LinksIfAny?.Outgoing?.Remove(edge);
                    edge.To = null;
                    removed = true;
                }
            }

            if (removed)
            {
                RecomputeLocked(node, ref batch);
            }
        }
    }

    /// <summary>Makes <paramref name="child"/> a child of <paramref name="parent"/>: raised with it from now on. Then, if the parent is
    /// raised above the child already, the child is raised at once ([X-PARENT]: the parent's raise reads its children after writing its
    /// floor; we read its floor after joining them, so one of the two sees the other).</summary>
    public static void Attach(IEscalationNode child, IEscalationNode parent, ref EscalationBatch batch)
    {
        (parent as WorkFlow)?.LinkToHolder(ref batch); // a region that gets a child is its own holder's child first ([X-LOCK-FAST])
        child.Links.AddParent(parent);
        parent.Links.AddChild(child);
        if (parent.Floor > child.Floor)
        {
            Recompute(child, ref batch);
        }
    }

    /// <summary>Undoes one <see cref="Attach"/>; a child raised through that parent drops back ([X-PARENT]).</summary>
    public static void Detach(IEscalationNode child, IEscalationNode parent, ref EscalationBatch batch)
    {
        parent.Links.RemoveChild(child);
        child.Links.RemoveParent(parent);
        if (child.Floor >= 0)
        {
            Recompute(child, ref batch);
        }
    }

    /// <summary>Recomputes <paramref name="node"/>'s floor and what it reaches.</summary>
    public static void Recompute(IEscalationNode node, ref EscalationBatch batch)
    {
        lock (s_lock)
        {
            RecomputeLocked(node, ref batch);
        }
    }

    /// <summary>For diagnostics: the waits on <paramref name="node"/> now (a copy).</summary>
    public static WaitEdge[] IncomingOf(IEscalationNode node)
    {
        lock (s_lock)
        {
            return node.LinksIfAny?.Incoming is { Count: > 0 } incoming ? incoming.ToArray() : [];
        }
    }

    /// <summary>[X-GRAPH]: a node's floor is the highest value of its same-scheduler waits (edges, and joins at a fixed level) and of its
    /// parents' floors; a change passes
    /// on to what the node waits on and to its children. Values only rise along a path, so a chain settles; a cycle of waits (a
    /// deadlock) keeps its floors.</summary>
    private static void RecomputeLocked(IEscalationNode start, ref EscalationBatch batch)
    {
        Stack<IEscalationNode> pending = s_pending;
        pending.Clear(); // left over only if a previous recompute threw
        pending.Push(start);
        while (pending.TryPop(out IEscalationNode? node))
        {
            (node as WorkFlow)?.LinkToHolderUnderLock(); // a region the graph counts is its holder's child ([X-LOCK-FAST])
            NodeLinks? links = node.LinksIfAny;
            int floor = node.JoinedLevel;
            object? cause = floor >= 0 ? node.JoinCause : null;
            if (links is not null)
            {
                int parentFloor = links.ParentFloor(out IEscalationNode? topParent);
                if (parentFloor > floor)
                {
                    floor = parentFloor;
                    cause = topParent;
                }

                if (links.Incoming is { } incoming)
                {
                    foreach (WaitEdge edge in incoming)
                    {
                        if (ReferenceEquals(edge.Scheduler, node.Scheduler) && edge.Value > floor)
                        {
                            floor = edge.Value;
                            cause = edge;
                        }
                    }
                }
            }

            int previous = node.GraphFloor;
            if (floor == previous)
            {
                continue;
            }

            node.SetFloor(floor); // before the node counts its queued work ([X-MOVE])
            node.OnFloorChanged(previous, floor, floor < 0 ? null : cause, ref batch);
            if (links?.Outgoing is { } outgoing)
            {
                foreach (WaitEdge edge in outgoing)
                {
                    if (edge.To is { } to)
                    {
                        pending.Push(to);
                    }
                }
            }

            links?.PushChildren(pending);
        }
    }
}
