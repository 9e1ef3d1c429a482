using System;
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
    private readonly string _kind;
    private int _floor = -1;
    private int _joined = -1;
    private IEscalationNode? _joiner; // the first flow whose code waits on this one's task ([X-JOIN])
    private NodeLinks? _links;
    private FlowContext?[]? _others; // by level, created on first use (Prioritize to another level inside the flow)

    /// <param name="scheduler">The scheduler the flow runs on.</param>
    /// <param name="level">The level it starts at.</param>
    /// <param name="kind">What the flow is, for diagnostics: "InvokeAsync", "TaskScope child", "PriorityLock 'x' region".</param>
    public WorkFlow(PriorityScheduler scheduler, int level, string kind)
        : base(scheduler, level)
    {
        _kind = kind;
    }

    public int OwnLevel => Level;

    public int Floor => Math.Max(Volatile.Read(ref _floor), JoinedLevel);

    public int GraphFloor => Volatile.Read(ref _floor);

    public int JoinedLevel => Math.Max(Volatile.Read(ref _joined), Volatile.Read(ref _joiner)?.Floor ?? -1);

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
    /// is kept in a field (as a parent: its raise reaches this flow). The graph recomputes the flow only when that can change what runs
    /// where (above its own level, or with children, waits or contexts below it); otherwise <see cref="Floor"/> carries it.</summary>
    /// <returns>False when another flow waits already: the caller adds an edge instead.</returns>
    public bool TryJoin(IEscalationNode? from, int level, Task task)
    {
        if (from is not null)
        {
            if (ReferenceEquals(from, this) || Interlocked.CompareExchange(ref _joiner, from, null) is not null)
            {
                return false;
            }

            from.Links.AddChild(this); // after the joiner is published: a raise of `from` that finds this child reads it
            if (!ReferenceEquals(Volatile.Read(ref _joiner), from))
            {
                from.Links.RemoveChild(this); // an end cleared it meanwhile and may have looked before the child was there
            }
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

        int wanted = Math.Max(level, from?.Floor ?? -1);
        if ((raised || from is not null) && (wanted > Level || LinksIfAny is not null || Volatile.Read(ref _others) is not null))
        {
            var batch = default(EscalationBatch);
            EscalationGraph.Recompute(this, ref batch);
            batch.Run();
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
        int joined = Interlocked.Exchange(ref _joined, -1);
        IEscalationNode? joiner = Interlocked.Exchange(ref _joiner, null);
        joiner?.LinksIfAny?.RemoveChild(this);
        if ((joined >= 0 || joiner is not null) && (GraphFloor >= 0 || LinksIfAny is not null || Volatile.Read(ref _others) is not null))
        {
            var batch = default(EscalationBatch);
            EscalationGraph.Recompute(this, ref batch);
            batch.Run();
        }
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
