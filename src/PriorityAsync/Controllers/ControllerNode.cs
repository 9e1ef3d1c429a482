using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>A <see cref="PriorityTaskController"/> in the escalation graph ([X-GRAPH]): a wait on its <c>Run</c> work, or on a lock whose
/// region was entered under it, raises the whole controller, which queues its place at the raised level as <c>SetLevel</c> would.</summary>
internal sealed class ControllerNode(PriorityTaskController controller) : IEscalationNode
{
    private int _floor = -1;
    private NodeLinks? _links;

    public PriorityScheduler Scheduler => controller.Context;

    public int OwnLevel => controller.LevelNow;

    public int Floor => Volatile.Read(ref _floor);

    public int GraphFloor => Floor;

    public int JoinedLevel => -1; // its Run tasks share the node: each wait is an edge with its task as the cause

    public object? JoinCause => null;

    public NodeLinks Links => Volatile.Read(ref _links) ?? NodeLinks.Create(ref _links);

    public NodeLinks? LinksIfAny => Volatile.Read(ref _links);

    public void SetFloor(int floor) => Volatile.Write(ref _floor, floor);

    public string Describe() => controller.ToString();

    public void OnFloorChanged(int previous, int floor, object? cause, ref EscalationBatch batch)
    {
        batch.After(controller.OnFloorChanged); // takes the controller's lock and queues: after the graph's lock
        EscalationReport.FloorChanged(this, previous, floor, cause, ref batch);
    }
}
