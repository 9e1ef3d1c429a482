using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// The host's handle on a <see cref="PriorityContext"/> bound to a thread the host owns (<see cref="PriorityContext.AttachToCurrentThread"/>):
/// the host's own loop (a game's frame, a UI message loop's idle time) calls <see cref="Drain(TimeSpan, int)"/>, which runs what is
/// ready, highest level first, within a time budget. No loop or thread of its own.
/// </summary>
/// <remarks>
/// <para>A drain runs what is ready (continuations, posts, <c>InvokeAsync</c> work, due loop timers), highest level first, FIFO within a
/// level, on the calling thread, exactly as the loop of <see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/> does; outside
/// a drain nothing of the context runs on the host's thread. The budget is checked between items and at checkpoints; levels from
/// <c>alwaysDrainFromLevel</c> up drain whatever the budget. A host that waits for its own events passes <c>workAvailable</c>, called
/// once per idle period. <c>Send</c> on the host's thread runs inline; a blocking wait there for work that needs a drain never returns.</para>
/// <para>The end: <see cref="Complete"/> lets the context end once its work is done; <see cref="Dispose"/> and <see cref="DisposeAsync"/>
/// end it now, dropping what is queued (reported through <see cref="PriorityScheduler.WorkDropped"/>) and faulting the tasks of work
/// that still waits with <see cref="ObjectDisposedException"/>. The call that ends the context (a drain, or <c>Dispose</c> on the host's
/// thread) rethrows its outcome as <c>Run</c> does. The whole story: docs/host-driven.md.</para>
/// <para>Thread safety: <see cref="Drain(TimeSpan, int)"/> on the host's thread only; <see cref="Complete"/>, <see cref="Dispose"/> and
/// <see cref="DisposeAsync"/> from any thread; the context's members from any thread, as always.</para>
/// </remarks>
public sealed class PriorityContextDriver : IAsyncDisposable, IDisposable
{
    /// <summary>The largest budget a drain takes: one day.</summary>
    public static readonly TimeSpan MaxBudget = TimeSpan.FromDays(1);

    // What the context's drain takes for "no budget".
    private static readonly TimeSpan NoBudget = TimeSpan.MinValue;

    internal PriorityContextDriver(PriorityContext context)
    {
        Context = context;
        ManagedThreadId = Environment.CurrentManagedThreadId;
    }

    /// <summary>Gets the context: hand work over with <c>InvokeAsync</c>, hop onto it with <c>await Context.Prioritize(level)</c>.</summary>
    public PriorityContext Context { get; }

    /// <summary>Gets the managed thread id of the host's thread, the only one that drains the context.</summary>
    public int ManagedThreadId { get; }

    /// <summary>Gets a task that completes when the context has ended: <see cref="PriorityScheduler.Completion"/> of <see cref="Context"/>.</summary>
    public Task Completion => Context.Completion;

    /// <summary>Gets whether a drain is running: read on the host's thread, whether the calling code runs inside one of its items (a
    /// nested message loop, as a modal dialog runs, raises the host's idle event there, and a drain from it would throw).</summary>
    public bool IsDraining => Context.IsDrainingForHost;

    /// <summary>Runs everything that is ready, highest level first, until nothing is (items posted meanwhile included), with no budget.</summary>
    /// <returns>What the drain did.</returns>
    /// <exception cref="InvalidOperationException">The calling thread is not the host's, or the call comes from inside an item a drain
    /// is running. Nothing was run.</exception>
    /// <remarks>A drain with nothing to do costs a few field reads. Without a budget, work that keeps queueing more work (an item that
    /// awaits <c>Task.Yield()</c> in a loop) keeps the drain going: give a frame loop a budget.</remarks>
    public PriorityDrainResult Drain() => Context.DrainForHost(NoBudget, exempt: 0, nameof(Drain));

    /// <summary>Runs what is ready, highest level first, until nothing is or <paramref name="budget"/> is spent (checked between items
    /// and at checkpoints).</summary>
    /// <param name="budget">How long items may start for, from <see cref="TimeSpan.Zero"/> (none starts) to <see cref="MaxBudget"/>
    /// (one day), on <see cref="PrioritySchedulerOptions.TimeProvider"/>'s clock.</param>
    /// <returns>What the drain did.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="budget"/> is negative or above one day.</exception>
    /// <exception cref="InvalidOperationException">The calling thread is not the host's, or the call comes from inside an item a drain
    /// is running. Nothing was run.</exception>
    public PriorityDrainResult Drain(TimeSpan budget) =>
        Context.DrainForHost(CheckBudget(budget), exempt: 0, nameof(Drain));

    /// <summary>Runs what is ready, highest level first, until nothing is or <paramref name="budget"/> is spent; levels from
    /// <paramref name="alwaysDrainFromLevel"/> up drain whatever the budget (input, which must not wait for a frame).</summary>
    /// <param name="budget">How long items of the levels below <paramref name="alwaysDrainFromLevel"/> may start for, from
    /// <see cref="TimeSpan.Zero"/> to <see cref="MaxBudget"/> (one day), on <see cref="PrioritySchedulerOptions.TimeProvider"/>'s clock.</param>
    /// <param name="alwaysDrainFromLevel">The lowest level that drains whatever the budget, from 0 (every level: the budget holds back
    /// nothing) to <c>Levels - 1</c>. Once the budget is spent, the drain goes on with those levels only, until none of them has work.</param>
    /// <returns>What the drain did.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="budget"/> is negative or above one day, or
    /// <paramref name="alwaysDrainFromLevel"/> is outside the context's levels.</exception>
    /// <exception cref="InvalidOperationException">The calling thread is not the host's, or the call comes from inside an item a drain
    /// is running. Nothing was run.</exception>
    public PriorityDrainResult Drain(TimeSpan budget, int alwaysDrainFromLevel)
    {
        CheckBudget(budget);
        if ((uint)alwaysDrainFromLevel >= (uint)Context.Levels)
        {
            throw new ArgumentOutOfRangeException(
                nameof(alwaysDrainFromLevel),
                alwaysDrainFromLevel,
                $"The lowest level that drains whatever the budget must be between 0 and {Context.Levels - 1} for {Context.Name} ({Context.Levels} levels).");
        }

        return Context.DrainForHost(budget, ~0UL << alwaysDrainFromLevel, nameof(Drain));
    }

    /// <summary>Lets the context end once its work is done: the first drain that then finds no outstanding operation (an
    /// <c>async void</c> method, <c>InvokeAsync</c> work, a root scope's child) and nothing queued ends it. Idempotent; any thread;
    /// never blocks.</summary>
    public void Complete() => Context.ReleaseOwnerHold();

    /// <summary>Ends the context: on the host's thread outside a drain, now (what is queued is dropped and reported, and the outcome is
    /// rethrown, as <see cref="PriorityContextThread.Dispose"/> does); from an item of a drain, the drain stops before its next item and
    /// ends the context before it returns; from another thread, the host's next drain ends it (the <c>workAvailable</c> callback tells
    /// the host). Idempotent.</summary>
    public void Dispose() => Context.EndFromHost(throwOutcome: true);

    /// <summary>Ends the context as <see cref="Dispose"/> does; the task completes, with the outcome, once the host has ended it (a
    /// completed task from an item of a drain, which cannot wait for itself). Idempotent.</summary>
    /// <returns>A task that completes when the context has ended (<see cref="Completion"/>).</returns>
    public ValueTask DisposeAsync() => Context.EndFromHostAsync();

    /// <summary>Describes the context and the host's thread.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Context} driven by thread {ManagedThreadId}";

    private static TimeSpan CheckBudget(TimeSpan budget)
    {
        if (budget < TimeSpan.Zero || budget > MaxBudget)
        {
            throw new ArgumentOutOfRangeException(
                nameof(budget), budget, $"A drain's budget must be between {TimeSpan.Zero} and {MaxBudget} (one day).");
        }

        return budget;
    }
}
