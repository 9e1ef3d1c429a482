using System.Collections.Generic;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// A node's part in the escalation graph ([X-GRAPH]), created when it first takes part: the waits on it and the waits it makes (under
/// the graph's lock), and its parents and children (under <see cref="_lock"/>, so a holder enters and leaves a region without the
/// graph's lock, [X-PARENT]).
/// </summary>
internal sealed class NodeLinks
{
    private SpinFlag _lock;
    private IEscalationNode? _parent;
    private List<IEscalationNode>? _moreParents;
    private IEscalationNode? _child;
    private List<IEscalationNode>? _moreChildren;

    /// <summary>The waits on this node (joins of its task, waits on a lock whose region it is). Graph lock.</summary>
    public List<WaitEdge>? Incoming { get; set; }

    /// <summary>The waits this node's code made. Graph lock.</summary>
    public List<WaitEdge>? Outgoing { get; set; }

    /// <summary>When the floor last rose above the node's own level (the scheduler's timestamp), for how long an escalation lasted. Graph lock.</summary>
    public long RaisedAt { get; set; }

    /// <summary>The highest level of the escalation under way. Graph lock.</summary>
    public int RaisedTo { get; set; }

    /// <summary>The raised work's name, taken when the escalation began (while someone listens). Graph lock.</summary>
    public string? RaisedWork { get; set; }

    /// <summary>Creates a node's links once, whichever thread asks first.</summary>
    public static NodeLinks Create(ref NodeLinks? field)
    {
        var created = new NodeLinks();
        return Interlocked.CompareExchange(ref field, created, null) ?? created;
    }

    /// <summary>The highest floor of the parents (a moment's look), or -1, and the parent it came from.</summary>
    public int ParentFloor(out IEscalationNode? top)
    {
        _lock.Enter();
        try
        {
            top = _parent;
            int floor = _parent?.Floor ?? -1;
            if (_moreParents is { } more)
            {
                foreach (IEscalationNode parent in more)
                {
                    if (parent.Floor > floor)
                    {
                        floor = parent.Floor;
                        top = parent;
                    }
                }
            }

            return floor;
        }
        finally
        {
            _lock.Exit();
        }
    }

    /// <summary>A moment's copy of the children, for a raise to pass on ([X-PARENT]); null when there are none.</summary>
    public IEscalationNode[]? ChildrenSnapshot()
    {
        _lock.Enter();
        try
        {
            if (_child is null)
            {
                return null;
            }

            if (_moreChildren is not { Count: > 0 } more)
            {
                return [_child];
            }

            var all = new IEscalationNode[more.Count + 1];
            all[0] = _child;
            more.CopyTo(all, 1);
            return all;
        }
        finally
        {
            _lock.Exit();
        }
    }

    public void AddParent(IEscalationNode parent) => Add(ref _parent, ref _moreParents, parent);

    public void RemoveParent(IEscalationNode parent) => Remove(ref _parent, ref _moreParents, parent);

    public void AddChild(IEscalationNode child) => Add(ref _child, ref _moreChildren, child);

    public void RemoveChild(IEscalationNode child) => Remove(ref _child, ref _moreChildren, child);

    private void Add(ref IEscalationNode? first, ref List<IEscalationNode>? more, IEscalationNode node)
    {
        _lock.Enter();
        try
        {
            if (first is null)
            {
                first = node;
            }
            else
            {
                (more ??= []).Add(node);
            }
        }
        finally
        {
            _lock.Exit();
        }
    }

    /// <summary>Removes one occurrence (a region's flow has one parent per holding, and two holdings may share one).</summary>
    private void Remove(ref IEscalationNode? first, ref List<IEscalationNode>? more, IEscalationNode node)
    {
        _lock.Enter();
        try
        {
            if (ReferenceEquals(first, node))
            {
                first = null;
                if (more is { Count: > 0 })
                {
                    first = more[^1];
                    more.RemoveAt(more.Count - 1);
                }
            }
            else
            {
                more?.Remove(node);
            }
        }
        finally
        {
            _lock.Exit();
        }
    }
}
