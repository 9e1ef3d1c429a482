using System.Threading;

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

    public int Floor => Volatile.Read(ref _floor);

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
