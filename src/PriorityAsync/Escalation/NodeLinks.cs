using System.Collections.Generic;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// A node's part in the escalation graph ([X-GRAPH]), created when it first takes part: the waits on it and the waits it makes (under
/// the graph's lock), and its parents and children (the first of each set by an interlocked operation, the others under
/// <see cref="_lock"/>, so a holder enters and leaves a region without the graph's lock, [X-PARENT]).
/// </summary>
internal sealed class NodeLinks
{
    private SpinFlag _lock;
    private SpinFlag _linkLock; // a region's link to its holder; taken before _lock of the holder's links, never under one
    private IEscalationNode? _linkedTo;
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

    /// <summary>A region's: the holder it is a child of, or null ([X-LOCK-FAST]). Set only after the child link is in.</summary>
    public IEscalationNode? LinkedTo => Volatile.Read(ref _linkedTo);

    /// <summary>[X-LOCK-FAST]: makes <paramref name="region"/> (whose links these are) the child of <paramref name="holder"/> (or of
    /// nobody) instead of the holder it is linked to, under the link's spin lock.</summary>
    /// <returns>False when it was linked to <paramref name="holder"/> already.</returns>
    public bool Relink(IEscalationNode region, IEscalationNode? holder)
    {
        _linkLock.Enter();
        try
        {
            IEscalationNode? linked = _linkedTo;
            if (ReferenceEquals(linked, holder))
            {
                return false;
            }

            linked?.LinksIfAny?.RemoveChild(region);
            holder?.Links.AddChild(region);
            Interlocked.Exchange(ref _linkedTo, holder); // after the child is in; a full fence before the caller reads the field again
            return true;
        }
        finally
        {
            _linkLock.Exit();
        }
    }

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
            top = Volatile.Read(ref _parent);
            int floor = top?.Floor ?? -1;
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

    /// <summary>Pushes the children as they are now, for a raise to pass on ([X-PARENT]).</summary>
    public void PushChildren(Stack<IEscalationNode> pending)
    {
        _lock.Enter();
        try
        {
            if (Volatile.Read(ref _child) is { } first)
            {
                pending.Push(first);
            }

            if (_moreChildren is { } more)
            {
                foreach (IEscalationNode child in more)
                {
                    pending.Push(child);
                }
            }
        }
        finally
        {
            _lock.Exit();
        }
    }

    /// <summary>Whether a change of this node's floor reaches other nodes: it has children, or its code waits on others (a moment's
    /// look, without the graph's lock: a dependent added meanwhile reads the floor itself).</summary>
    public bool HasDependents => Volatile.Read(ref _child) is not null || _moreChildren is { Count: > 0 } || Outgoing is { Count: > 0 };

    public void AddParent(IEscalationNode parent) => Add(ref _parent, ref _moreParents, parent);

    public void RemoveParent(IEscalationNode parent) => Remove(ref _parent, ref _moreParents, parent);

    public void AddChild(IEscalationNode child) => Add(ref _child, ref _moreChildren, child);

    public void RemoveChild(IEscalationNode child) => Remove(ref _child, ref _moreChildren, child);

    // The first parent (child) is set and cleared with one interlocked operation: a region has one parent per holding, a flow a child
    // per region it holds, so the spin lock guards only the rare list. A node present throughout an add or a remove is seen by a reader.
    private void Add(ref IEscalationNode? first, ref List<IEscalationNode>? more, IEscalationNode node)
    {
        if (Interlocked.CompareExchange(ref first, node, null) is null)
        {
            return;
        }

        _lock.Enter();
        try
        {
            (more ??= []).Add(node);
        }
        finally
        {
            _lock.Exit();
        }
    }

    /// <summary>Removes one occurrence (a region's flow has one parent per holding, and two holdings may share one).</summary>
    private void Remove(ref IEscalationNode? first, ref List<IEscalationNode>? more, IEscalationNode node)
    {
        if (ReferenceEquals(Interlocked.CompareExchange(ref first, null, node), node))
        {
            return;
        }

        _lock.Enter();
        try
        {
            more?.Remove(node);
        }
        finally
        {
            _lock.Exit();
        }
    }
}
