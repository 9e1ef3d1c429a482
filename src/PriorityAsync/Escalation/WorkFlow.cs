using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One flow of work the scheduler can raise ([X-FLOW]): the work of an <c>InvokeAsync</c> call or of a scope's child, or the region of a
/// held priority lock. It is its own context at the level it starts at (so a flow costs one object); its code runs in its contexts, one
/// per level it runs at, so every <c>await</c> in it comes back through the flow; a raise moves what it has queued and what it queues
/// until it drops back ([X-MOVE]).
/// </summary>
internal sealed class WorkFlow : FlowContext, IEscalationNode
{
    private const int MaxUpWalk = 64;

    private readonly string _kind;
    private readonly PrioritySemaphore? _regionOf; // a region's semaphore: its lock-free holding is claimed through it ([X-LOCK-FAST])
    private int _floor = -1;
    private int _joined = -1;
    private IEscalationNode? _up; // the first flow whose code waits on this one's task ([X-JOIN]), or the claimed holder of this region ([X-LOCK-FAST])
    private NodeLinks? _links;
    private FlowContext?[]? _others; // by level, created on first use (Prioritize to another level inside the flow)

    /// <param name="scheduler">The scheduler the flow runs on.</param>
    /// <param name="level">The level it starts at.</param>
    /// <param name="kind">What the flow is, for diagnostics: "InvokeAsync", "TaskScope child", "PriorityLock 'x' region".</param>
    /// <param name="regionOf">The semaphore whose region it is ([X-LOCK]): then its field holds its claimed holder's node; otherwise
    /// null, and the field holds the first flow that waits on its task ([X-JOIN]).</param>
    public WorkFlow(PriorityScheduler scheduler, int level, string kind, PrioritySemaphore? regionOf = null)
        : base(scheduler, level)
    {
        _kind = kind;
        _regionOf = regionOf;
    }

    /// <summary>Whether it is the region of a priority lock (no field of its own: an InvokeAsync call allocates one flow).</summary>
    public bool IsRegion => _regionOf is not null;

    public int OwnLevel => Level;

    public int Floor => Math.Max(Volatile.Read(ref _floor), JoinedLevel);

    public int GraphFloor => Volatile.Read(ref _floor);

    /// <summary>[X-JOIN]: the joined level and the floors of the flows that hold this one up from their fields, walked without
    /// recursion: a cycle of waits (a deadlock) ends the walk where it meets this flow again, and a longer chain than the walk is left
    /// to the graph, which links the same flows as parents.</summary>
    public int JoinedLevel
    {
        get
        {
            int level = Volatile.Read(ref _joined);
            IEscalationNode? up = Up;
            for (int depth = 0; up is not null && !ReferenceEquals(up, this) && depth < MaxUpWalk; depth++)
            {
                if (up is not WorkFlow flow)
                {
                    return Math.Max(level, up.Floor);
                }

                level = Math.Max(level, Math.Max(flow.GraphFloor, Volatile.Read(ref flow._joined)));
                up = flow.Up;
            }

            return level;
        }
    }

    /// <summary>For tests: the holder a region is a child of now, or null ([X-LOCK-FAST]).</summary>
    internal IEscalationNode? LinkedHolder => LinksIfAny?.LinkedTo;

    public object? JoinCause => IsRegion ? Up : Joins.FixedLevel; // a region's holder owns it; a flow is joined

    /// <summary>The field: a joined flow's first waiter, or a region's holder, claimed now if its holding was taken lock-free and not yet
    /// claimed ([X-LOCK-FAST], "The lazy claim"): whoever needs a region's holder reads it here.</summary>
    private IEscalationNode? Up => Volatile.Read(ref _up) ?? (IsRegion ? _regionOf!.ClaimLockFreeHolding(this) : null);

    public NodeLinks Links => Volatile.Read(ref _links) ?? NodeLinks.Create(ref _links);

    public NodeLinks? LinksIfAny => Volatile.Read(ref _links);

    /// <summary>The work the flow runs, to name it; null for a lock's region.</summary>
    public INamedWork? Work { get; set; }

    public void SetFloor(int floor) => Volatile.Write(ref _floor, floor);

    /// <summary>The flow's context at <paramref name="level"/> (an <c>await Prioritize(level)</c> inside the flow stays in it).</summary>
    public FlowContext AtLevel(int level)
    {
        if (level == Level)
        {
            return this;
        }

        FlowContext?[] others = Volatile.Read(ref _others) ?? CreateOthers();
        return Volatile.Read(ref others[level]) ?? CreateContext(others, level);
    }

    /// <summary>[X-JOIN]: code at <paramref name="level"/>, running in <paramref name="from"/> (a flow, or null: level code), waits on this
    /// flow's <paramref name="task"/>. Without an edge: the joined level only rises until the task completes, and the first waiting flow
    /// holds this one up from its field. The graph recomputes the flow only when that can change what runs where; otherwise
    /// <see cref="Floor"/> carries it.</summary>
    /// <returns>False when another flow waits already: the caller adds an edge instead.</returns>
    public bool TryJoin(IEscalationNode? from, int level, Task task)
    {
        if (IsRegion || (from is not null && !TryTakeUp(from)))
        {
            return false;
        }

        bool raised = false;
        int seen = Volatile.Read(ref _joined);
        while (level > seen)
        {
            int was = Interlocked.CompareExchange(ref _joined, level, seen);
            if (was == seen)
            {
                raised = true;
                break;
            }

            seen = was;
        }

        if (raised || from is not null)
        {
            RecomputeIfItMatters(Math.Max(level, from?.Floor ?? -1));
        }

        if (task.IsCompleted)
        {
            EndJoins(); // it completed meanwhile: its end may have looked before our join
        }

        return true;
    }

    /// <summary>[X-JOIN]: the flow's task completed; the joins without an edge end.</summary>
    public void EndJoins()
    {
        if (IsRegion)
        {
            return; // a region has no task; its field holds its holder
        }

        int joined = Interlocked.Exchange(ref _joined, -1);
        IEscalationNode? up = Interlocked.Exchange(ref _up, null);
        up?.LinksIfAny?.RemoveChild(this);
        if (joined >= 0 || up is not null)
        {
            RecomputeIfCounted();
        }
    }

    /// <summary>A region's claimed holder as the field holds it now, without claiming ([X-LOCK-FAST]).</summary>
    public IEscalationNode? Claimant => Volatile.Read(ref _up);

    /// <summary>Whether a holding has named its holder in the region's field.</summary>
    public bool HasClaim => Volatile.Read(ref _up) is not null;

    /// <summary>[X-LOCK-FAST]: this region's holding by code running in <paramref name="holder"/> is claimed: the field names the holder.
    /// Called by the semaphore only, under its lock or for its lock-free holding once it has set Claimed, so the field is free.</summary>
    public void Claim(IEscalationNode holder)
    {
        Debug.Assert(IsRegion && Volatile.Read(ref _up) is null && !ReferenceEquals(holder, this), "one claimed holding per region at a time");
        Volatile.Write(ref _up, holder);
    }

    /// <summary>After a claim under the semaphore's lock (outside it): the graph recomputes the region if the holder is raised above it
    /// already (the recompute links it first).</summary>
    public void AfterClaim(IEscalationNode holder) => RecomputeIfItMatters(holder.Floor);

    /// <summary>[X-LOCK-FAST]: the claimed holding ended (under the semaphore's lock, before its permit is free). An interlocked exchange:
    /// it is read against a linker's <see cref="NodeLinks.LinkedTo"/>, which <see cref="AfterUnclaim"/> reads next.</summary>
    public void Unclaim()
    {
        Debug.Assert(IsRegion, "a region's field");
        Interlocked.Exchange(ref _up, null);
    }

    /// <summary>After <see cref="Unclaim"/> (outside the semaphore's lock): a link made for the ended holding goes, and a floor the graph
    /// counted drops.</summary>
    public void AfterUnclaim()
    {
        if (LinksIfAny?.LinkedTo is not null)
        {
            var batch = default(EscalationBatch);
            Relink(recompute: true, ref batch, depth: 0); // [X-LOCK-FAST]: a link made for this holding (or a stale one) goes
            batch.Run();
        }

        RecomputeIfCounted();
    }

    /// <summary>[X-LOCK-FAST]: a region held from its field becomes its holder's child before it queues, gets a child or a wait of its
    /// own, or is counted by the graph; a raise of the holder then reaches it. Nothing to do for a flow that is not a region, or once
    /// linked to the holder in the field.</summary>
    /// <param name="batch">Receives the region's recompute when its holder is raised above its level already.</param>
    public void LinkToHolder(ref EscalationBatch batch)
    {
        if (LinkIsStale)
        {
            Relink(recompute: true, ref batch, depth: 0);
        }
    }

    /// <summary><see cref="LinkToHolder(ref EscalationBatch)"/>, its recompute run at once (the caller holds no lock).</summary>
    public void LinkToHolder()
    {
        if (LinkIsStale)
        {
            var batch = default(EscalationBatch);
            Relink(recompute: true, ref batch, depth: 0);
            batch.Run();
        }
    }

    /// <summary>Links without a recompute, under a lock: the graph's as it recomputes this region (which counts it), or the timers'
    /// (the region was linked, and recomputed, when the timer was made).</summary>
    public void LinkToHolderUnderLock()
    {
        if (LinkIsStale)
        {
            var none = default(EscalationBatch); // stays empty: no recompute
            Relink(recompute: false, ref none, depth: 0);
        }
    }

    /// <summary>A region whose child link is not to the holder in its field (none yet, or an ended holding's): two reads.</summary>
    private bool LinkIsStale => IsRegion && !ReferenceEquals(Up, LinksIfAny?.LinkedTo);

    /// <summary>[X-LOCK-FAST]: makes the child link match the field: unlinks a holder no longer in it, links the one in it (its own
    /// holder first, if that is a region too), and repeats while the field changes under it.</summary>
    private void Relink(bool recompute, ref EscalationBatch batch, int depth)
    {
        while (true)
        {
            IEscalationNode? up = Volatile.Read(ref _up);
            if (up is WorkFlow { LinkIsStale: true } upRegion && depth < MaxUpWalk) // regions that hold each other's locks end the walk
            {
                upRegion.Relink(recompute, ref batch, depth + 1); // the chain is linked from the top before this region's item goes in
            }

            NodeLinks? links = up is null ? LinksIfAny : Links;
            if (links is null || !links.Relink(this, up))
            {
                return; // linked meanwhile (or nothing held and nothing linked)
            }

            if (ReferenceEquals(Volatile.Read(ref _up), up))
            {
                if (up is not null && recompute && (up.Floor > Level || LinksIfAny?.HasDependents == true || Volatile.Read(ref _others) is not null))
                {
                    EscalationGraph.Recompute(this, ref batch); // its holder was raised before the link: counted from now on
                }

                return;
            }
        }
    }

    /// <summary>Publishes <paramref name="up"/> in the field, then attaches this flow as its child, so that a raise of it that finds the
    /// child reads the field ([X-PARENT]); an end that cleared the field in between may have looked before the child was there.</summary>
    private bool TryTakeUp(IEscalationNode up)
    {
        if (ReferenceEquals(up, this) || Interlocked.CompareExchange(ref _up, up, null) is not null)
        {
            return false;
        }

        (up as WorkFlow)?.LinkToHolder(); // a region gets a child: linked to its own holder first ([X-LOCK-FAST])
        up.Links.AddChild(this);
        if (!ReferenceEquals(Volatile.Read(ref _up), up))
        {
            up.Links.RemoveChild(this);
        }

        return true;
    }

    /// <summary>After a join or a holding raised the level this flow is held at to <paramref name="wanted"/>: the graph recomputes it only
    /// if that can change what runs where (above its own level; or it has children, waits of its own or contexts below its level, which
    /// the recompute reaches); otherwise the posters read it in <see cref="Floor"/>.</summary>
    private void RecomputeIfItMatters(int wanted)
    {
        if (wanted > Level || LinksIfAny?.HasDependents == true || Volatile.Read(ref _others) is not null)
        {
            Recompute();
        }
    }

    /// <summary>After a join or a holding ended: the graph recomputes the flow only if it had counted them (or may have).</summary>
    private void RecomputeIfCounted()
    {
        if (GraphFloor >= 0 || LinksIfAny?.HasDependents == true || Volatile.Read(ref _others) is not null)
        {
            Recompute();
        }
    }

    private void Recompute()
    {
        var batch = default(EscalationBatch);
        EscalationGraph.Recompute(this, ref batch);
        batch.Run();
    }

    public string Describe() => Work?.Describe() is { } work ? $"{_kind} {work}" : _kind;

    /// <summary>[X-MOVE]: on a raise, every context below the new floor gets a place at it for each item it holds; the floor was written
    /// before, so an item added after the count is queued at the new floor by its poster.</summary>
    public void OnFloorChanged(int previous, int floor, object? cause, ref EscalationBatch batch)
    {
        if (floor > previous)
        {
            MoveUp(this, floor, ref batch);
            if (Volatile.Read(ref _others) is { } others)
            {
                foreach (FlowContext? context in others)
                {
                    if (context is not null)
                    {
                        MoveUp(context, floor, ref batch);
                    }
                }
            }
        }

        EscalationReport.FloorChanged(this, previous, floor, cause, ref batch);
    }

    private static void MoveUp(FlowContext context, int floor, ref EscalationBatch batch)
    {
        if (context.Level < floor && context.PendingCount is > 0 and int count)
        {
            batch.Move(context, floor, count);
        }
    }

    private FlowContext?[] CreateOthers()
    {
        var created = new FlowContext?[Scheduler.Levels];
        return Interlocked.CompareExchange(ref _others, created, null) ?? created;
    }

    private FlowContext CreateContext(FlowContext?[] others, int level)
    {
        var created = new FlowContext(this, level);
        return Interlocked.CompareExchange(ref others[level], created, null) ?? created;
    }
}
