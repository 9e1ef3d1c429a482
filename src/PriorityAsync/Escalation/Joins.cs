using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>[X-JOIN]: code that awaits the task of work a scheduler started (a <see cref="PriorityTask"/>, <see cref="Priority.Join(Task)"/>)
/// waits on that work's node: the work runs at least at the waiting code's level until its task completes.</summary>
internal static class Joins
{
    /// <summary>The cause of a floor that a join without an edge gave (<see cref="WorkFlow.TryJoin"/>), for its report.</summary>
    public static readonly object FixedLevel = new();

    /// <summary>The calling code is about to wait for <paramref name="task"/>: if a scheduler started it and the caller runs on the same
    /// scheduler, add the wait to the graph. <see cref="Ended"/> removes it when the task completes.</summary>
    public static void Join(Task task)
    {
        if (task.IsCompleted || task.AsyncState is not IEscalationNode target)
        {
            return; // done, or not work a scheduler started: nothing to raise
        }

        if (SynchronizationContext.Current is not PrioritySynchronizationContext waiter || !ReferenceEquals(waiter.Scheduler, target.Scheduler))
        {
            return; // the caller runs on no priority scheduler, or on another one: its level means nothing to the work's
        }

        if (target is WorkFlow flow && flow.TryJoin(waiter.Node, waiter.Level, task))
        {
            return; // no edge: the usual await of one piece of work at a time
        }

        var edge = new WaitEdge(waiter.Node, waiter.Level, waiter.Scheduler, target, task);
        var batch = default(EscalationBatch);
        EscalationGraph.Add(edge, ref batch);
        if (task.IsCompleted)
        {
            // The work completed while the wait was added: its Ended may have looked before the edge was there ([X-JOIN]).
            EscalationGraph.Remove(edge, ref batch);
        }

        batch.Run();
    }

    /// <summary>The task of <paramref name="node"/>'s work has completed (its operation calls this after completing it): the waits on it
    /// end. Nothing to do for work nobody waited on.</summary>
    public static void Ended(IEscalationNode node, Task task)
    {
        (node as WorkFlow)?.EndJoins();
        if (node.LinksIfAny is null)
        {
            return;
        }

        var batch = default(EscalationBatch);
        EscalationGraph.RemoveWaitsFor(node, task, ref batch);
        batch.Run();
    }
}
