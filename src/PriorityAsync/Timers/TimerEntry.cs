using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// A loop timer as the scheduler's heap and queues see it: a due time, a level, and what to do when its firing runs.
/// Subclasses: <see cref="LoopTimer"/> (the <see cref="System.Threading.ITimer"/> of the context's <see cref="System.TimeProvider"/>)
/// and <see cref="DelaySource"/> (the pooled source behind <see cref="Priority.Delay"/>).
/// </summary>
/// <remarks>
/// Every field below is guarded by the owning scheduler's timer lock, except where a subclass says otherwise. A firing travels through
/// the level queues as a <see cref="WorkItem"/> of (<see cref="FireCallback"/>, the entry): no allocation per firing.
/// </remarks>
internal abstract class TimerEntry
{
    /// <summary>The one callback of every queued firing; the state is the entry.</summary>
    public static readonly SendOrPostCallback FireCallback = static state => ((TimerEntry)state!).RunFiring();

    protected TimerEntry(LoopTimers timers) => Timers = timers;

    /// <summary>The timers of the scheduler that owns the entry.</summary>
    public LoopTimers Timers { get; }

    /// <summary>The scheduler that owns the entry.</summary>
    public PriorityScheduler Host => Timers.Host;

    /// <summary>The level the firing is queued at.</summary>
    public int Level { get; protected set; }

    /// <summary>The flow the firing goes through instead, when the entry was made by a flow's code at its own level: a raise of the flow
    /// then moves the firing too ([X-MOVE]). Null otherwise.</summary>
    public FlowContext? Route { get; protected set; }

    /// <summary>Stopwatch timestamp at which the entry is due (meaningful while <see cref="HeapIndex"/> &gt;= 0).</summary>
    public long Due { get; set; }

    /// <summary>Arming order, for FIFO among equal due times.</summary>
    public long Sequence { get; set; }

    /// <summary>Position in the heap, or -1 when not armed.</summary>
    public int HeapIndex { get; set; } = -1;

    /// <summary>The period in Stopwatch ticks, or 0 for a one-shot entry.</summary>
    public long Period { get; set; }

    /// <summary>A firing was decided (the entry came due) and has not run yet. At most one at a time.</summary>
    public bool FireRequested { get; set; }

    /// <summary>A (FireCallback, this) item sits in the level queues. Cleared when it runs or is dropped.</summary>
    public bool ItemQueued { get; set; }

    /// <summary>Runs on a thread of the scheduler, at <see cref="Level"/>, when the queued firing is dispatched.</summary>
    protected abstract void RunFiring();

    /// <summary>The entry will never fire: it was armed (or its firing was queued) when the scheduler finished ([D-DROP]). Any thread.</summary>
    public abstract void OnDropped();
}
