using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// The <see cref="SynchronizationContext"/> of one level of a <see cref="PriorityContext"/>. There is exactly one instance per
/// level, so an <c>await</c> that captures it resumes at the same level: the level is carried by the captured context.
/// </summary>
/// <remarks>
/// <para>No two callbacks of a <see cref="PriorityContext"/> ever run concurrently: all run on its loop thread, one at a time.</para>
/// <para><see cref="Post"/> may be called from any thread and never blocks. <see cref="Send"/> runs inline on the loop thread
/// and blocks any other caller until the callback ran, rethrowing its exception to the caller.</para>
/// <para>A <see cref="PriorityTaskController"/> has one more instance of its own (not sealed for that reason only; its constructor is
/// internal), whose <see cref="Level"/> follows the controller's, so awaits inside its work come back through the controller.</para>
/// </remarks>
public class PrioritySynchronizationContext : SynchronizationContext
{
    // Written only by a controller's own context (SetLevel); fixed for the per-level instances.
    private int _level;

    internal PrioritySynchronizationContext(PriorityContext context, int level)
    {
        Context = context;
        _level = level;
    }

    /// <summary>Gets the context this level belongs to.</summary>
    public PriorityContext Context { get; }

    /// <summary>Gets the level callbacks posted here run at (for a controller's context, the controller's level now).</summary>
    public int Level => Volatile.Read(ref _level);

    /// <summary>A controller's context follows the controller's level.</summary>
    internal void SetLevel(int level) => Volatile.Write(ref _level, level);

    /// <summary>Queues <paramref name="d"/> at this level. Never blocks; allocates nothing in steady state.</summary>
    /// <param name="d">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <remarks>After the context has finished the callback is not run: it is counted and reported through <see cref="PriorityContext.WorkDropped"/>.</remarks>
    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Context.Enqueue(Level, d, state, ExecutionContextFlow.Capture()); // a plain callback runs in its poster's context (E1)
    }

    /// <summary>Runs <paramref name="d"/> at this level and returns when it has run.</summary>
    /// <param name="d">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <remarks>
    /// On the loop thread the callback runs inline. From another thread, the callback is queued at this level and the calling thread
    /// blocks until it ran; its exception is rethrown on the calling thread. Throws <see cref="ObjectDisposedException"/> if the
    /// context has finished, or finishes before the callback could run.
    /// </remarks>
    public override void Send(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Context.Send(Level, d, state);
    }

    /// <summary>Queues the continuation of an awaiting method where this context's work goes: the back of its level, or, for a
    /// controller's context, the controller's own queue (so a method that yields at a checkpoint stays under its controller).</summary>
    internal virtual void QueueContinuation(Action continuation, bool flowExecutionContext) =>
        Context.QueueContinuation(Level, continuation, flowExecutionContext);

    /// <summary>Returns this instance: contexts are immutable and shared, and the copy keeps the level.</summary>
    /// <returns>This instance.</returns>
    public override SynchronizationContext CreateCopy() => this;

    /// <summary>Counts an operation (an <c>async void</c> method) that keeps the context alive until it completes.</summary>
    public override void OperationStarted() => Context.OperationStarted();

    /// <summary>Ends an operation started with <see cref="OperationStarted"/>.</summary>
    /// <exception cref="InvalidOperationException">No operation is outstanding (more calls than to <see cref="OperationStarted"/>).</exception>
    public override void OperationCompleted() => Context.OperationCompleted();

    /// <summary>Describes the context and the level.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Context.Name} level {Level}";
}
