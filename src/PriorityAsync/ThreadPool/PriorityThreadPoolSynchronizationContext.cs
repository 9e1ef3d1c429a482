using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// The <see cref="SynchronizationContext"/> of one level of a <see cref="PriorityThreadPool"/>: without thread affinity (a callback runs
/// on any of the pool's threads). One instance per level, so an <c>await</c> that captures it resumes at the same level.
/// </summary>
/// <remarks><see cref="Post"/> may be called from any thread and never blocks. <see cref="Send"/> runs inline on a pool thread and
/// blocks any other caller until the callback ran, rethrowing its exception.</remarks>
public sealed class PriorityThreadPoolSynchronizationContext : SynchronizationContext
{
    internal PriorityThreadPoolSynchronizationContext(PriorityThreadPool pool, int level)
    {
        Pool = pool;
        Level = level;
    }

    /// <summary>Gets the pool this level belongs to.</summary>
    public PriorityThreadPool Pool { get; }

    /// <summary>Gets the level callbacks posted here run at.</summary>
    public int Level { get; }

    /// <summary>Queues <paramref name="d"/> at this level; it runs in the poster's <see cref="ExecutionContext"/>. Never blocks.</summary>
    /// <param name="d">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <remarks>After the pool has finished the callback is not run: it is counted and reported through <see cref="PriorityThreadPool.WorkDropped"/>.</remarks>
    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Pool.Enqueue(Level, d, state, ExecutionContextFlow.Capture()); // a plain callback runs in its poster's context (E1)
    }

    /// <summary>Runs <paramref name="d"/> at this level and returns when it has run: inline on a pool thread, else queued while the caller blocks.</summary>
    /// <param name="d">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <remarks>
    /// <para>Throws <see cref="ObjectDisposedException"/> if the pool has finished, or finishes before the callback could run.</para>
    /// <para>On a pool thread the callback always runs inline, at once, whatever waits above this level: queueing it and blocking the
    /// thread could deadlock the pool. With <see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/>, the callback uses a slot of
    /// this level while it runs if the level has room (the caller keeps its own); if the level is at its cap, it runs all the same on
    /// the caller's slot, so the level may run one more callback than its cap while it does.</para>
    /// </remarks>
    public override void Send(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Pool.Send(Level, d, state);
    }

    /// <summary>Returns this instance: contexts are immutable and shared.</summary>
    /// <returns>This instance.</returns>
    public override SynchronizationContext CreateCopy() => this;

    /// <summary>Counts an operation (an <c>async void</c> method) that keeps the pool alive until it completes.</summary>
    public override void OperationStarted() => Pool.OperationStarted();

    /// <summary>Ends an operation started with <see cref="OperationStarted"/>.</summary>
    /// <exception cref="InvalidOperationException">No operation is outstanding.</exception>
    public override void OperationCompleted() => Pool.OperationCompleted();

    /// <summary>Describes the pool and the level.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Pool.Name} level {Level}";
}
