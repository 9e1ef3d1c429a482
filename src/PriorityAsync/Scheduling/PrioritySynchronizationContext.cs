using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// The <see cref="SynchronizationContext"/> of one level of a priority scheduler (a <see cref="PriorityContext"/> or a
/// <see cref="PriorityThreadPool"/>). There is exactly one instance per level, so an <c>await</c> that captures it resumes at the same
/// level: the level is carried by the captured context.
/// </summary>
/// <remarks>
/// <para><see cref="Post"/> may be called from any thread and never blocks. <see cref="Send"/> runs inline on a thread of the scheduler
/// and blocks any other caller until the callback ran, rethrowing its exception to the caller.</para>
/// <para>On a <see cref="PriorityContext"/> no two callbacks ever run concurrently; on a <see cref="PriorityThreadPool"/> a callback
/// runs on any of its threads.</para>
/// <para>A <see cref="PriorityTaskController"/> has one more instance of its own (not sealed for that reason only; its constructor is
/// internal), whose <see cref="Level"/> follows the controller's, so awaits inside its work come back through the controller.</para>
/// </remarks>
public class PrioritySynchronizationContext : SynchronizationContext
{
    // Written only by a controller's own context (SetLevel); fixed for the per-level instances.
    private int _level;

    internal PrioritySynchronizationContext(PriorityScheduler scheduler, int level, IEscalationNode? node = null)
    {
        Scheduler = scheduler;
        _level = level;
        Node = node;
    }

    /// <summary>Gets the scheduler this level belongs to.</summary>
    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets the level callbacks posted here run at (for a controller's context, the controller's level now).</summary>
    public int Level => Volatile.Read(ref _level);

    /// <summary>A controller's context follows the controller's level.</summary>
    internal void SetLevel(int level) => Volatile.Write(ref _level, level);

    /// <summary>What the code running in this context belongs to and is raised with ([X-FLOW]): its flow, or its controller; null for
    /// a level's own context, whose code is not in any flow.</summary>
    internal IEscalationNode? Node { get; private protected set; }

    /// <summary>The level work posted here runs at now: <see cref="Level"/>, or higher while its flow is raised ([X-GRAPH]).</summary>
    internal int EffectiveLevel => Node is { } node ? Math.Max(Level, node.Floor) : Level;

    /// <summary>Where code running here goes on at <paramref name="level"/> (an <c>await Prioritize(level)</c>): the same flow at that level,
    /// or that level's own context. <paramref name="level"/> is valid: every caller has checked it.</summary>
    internal PrioritySynchronizationContext ContextAt(int level) => FlowAt(level) ?? Scheduler.LevelContext(level);

    /// <summary>The context of this code's flow at <paramref name="level"/>, or null for code outside any flow (a level's own context, a
    /// controller's), which goes on in the level's own context, whose effective level is its level: the awaitables keep that case to
    /// one null test ([X-FLOW]). <paramref name="level"/> is valid.</summary>
    internal FlowContext? FlowAt(int level) => Node is WorkFlow flow ? flow.AtLevel(level) : null;

    /// <summary>Queues <paramref name="d"/> at this level; it runs in the poster's <see cref="ExecutionContext"/>. Never blocks;
    /// allocates nothing in steady state.</summary>
    /// <param name="d">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <remarks>After the scheduler has finished the callback is not run: it is counted and reported through
    /// <see cref="PriorityScheduler.WorkDropped"/>.</remarks>
    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Scheduler.Enqueue(Level, d, state, ExecutionContextFlow.Capture()); // a plain callback runs in its poster's context ([E-FLOW])
    }

    /// <summary>Runs <paramref name="d"/> at this level and returns when it has run.</summary>
    /// <param name="d">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <remarks>
    /// <para>On a thread of the scheduler the callback runs inline, at once, whatever waits above this level: queueing it and blocking
    /// the thread could deadlock. From another thread it is queued at this level and the caller blocks until it ran; its exception is
    /// rethrown on the calling thread. Throws <see cref="ObjectDisposedException"/> if the scheduler has finished, or finishes before
    /// the callback could run.</para>
    /// <para>On a pool with <see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/>, an inline callback uses a slot of this level
    /// while it runs if the level has room (the caller keeps its own); if the level is at its cap, it runs all the same on the caller's
    /// slot, so the level may run one more callback than its cap while it does.</para>
    /// </remarks>
    public override void Send(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Scheduler.Send(this, d, state);
    }

    /// <summary>Queues the continuation of an awaiting method where this context's work goes: the back of its level, or, for a
    /// controller's context or a flow's, the controller's or the flow's own queue.</summary>
    internal virtual void QueueContinuation(Action continuation, bool flowExecutionContext) =>
        Scheduler.QueueContinuation(Level, continuation, flowExecutionContext);

    /// <summary>Queues an item where this context's work goes (a sent callback's waiter, the start of an <c>InvokeAsync</c>).</summary>
    internal virtual void QueueItem(in WorkItem item) => Scheduler.Enqueue(Level, item.Callback, item.State, item.ExecutionContext);

    /// <summary>Returns this instance: contexts are immutable and shared, and the copy keeps the level.</summary>
    /// <returns>This instance.</returns>
    public override SynchronizationContext CreateCopy() => this;

    /// <summary>Counts an operation (an <c>async void</c> method) that keeps the scheduler alive until it completes.</summary>
    public override void OperationStarted() => Scheduler.OperationStarted();

    /// <summary>Ends an operation started with <see cref="OperationStarted"/>.</summary>
    /// <exception cref="InvalidOperationException">No operation is outstanding (more calls than to <see cref="OperationStarted"/>).</exception>
    public override void OperationCompleted() => Scheduler.OperationCompleted();

    /// <summary>Describes the scheduler and the level.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Scheduler.Name} level {Level}";
}
