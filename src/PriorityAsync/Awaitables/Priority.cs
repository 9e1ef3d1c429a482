using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// Awaitables for code that runs on a priority scheduler: a <see cref="PriorityContext"/> (one loop thread) or a
/// <see cref="PriorityThreadPool"/> (N threads). Each member finds the scheduler through <see cref="SynchronizationContext.Current"/>.
/// Import with <c>using static PriorityAsync.Priority;</c> to write <c>await Prioritize(2);</c>, <c>await Yield();</c> and
/// <c>await Checkpoint();</c>.
/// </summary>
/// <remarks>Called by code that runs on neither scheduler, every member except <see cref="CurrentScheduler"/> throws
/// <see cref="InvalidOperationException"/>, whose message says what the caller runs on instead and how to get onto either scheduler.</remarks>
public static class Priority
{
    /// <summary>
    /// Moves the rest of the calling method to <paramref name="level"/> of the scheduler it runs on (a <see cref="PriorityContext"/>
    /// or a <see cref="PriorityThreadPool"/>). Later awaits in the method come back at that level. Completes at once, without queueing
    /// or allocating, when nothing is queued at a level above <paramref name="level"/> (on a pool: nothing this thread may run, and,
    /// with caps, <paramref name="level"/> has room); otherwise the rest of the method is queued at <paramref name="level"/>, behind
    /// everything more urgent. It never busy-waits, and it cannot interrupt a callback that is already running.
    /// </summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is running on neither a <see cref="PriorityContext"/> nor a
    /// <see cref="PriorityThreadPool"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static PriorityAwaitable Prioritize(int level)
    {
        PrioritySynchronizationContext current = Require(nameof(Prioritize));
        PriorityScheduler scheduler = current.Scheduler;
        level = scheduler.ValidateLevel(level);
        return new(scheduler, current.FlowAt(level), level, alwaysQueue: false);
    }

    /// <summary>Queues the rest of the calling method at the back of its current level of the scheduler it runs on (a
    /// <see cref="PriorityContext"/> or a <see cref="PriorityThreadPool"/>), letting everything already queued at that level or above
    /// run first.</summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is running on neither a <see cref="PriorityContext"/> nor a
    /// <see cref="PriorityThreadPool"/>.</exception>
    public static PriorityAwaitable Yield()
    {
        PrioritySynchronizationContext current = Require(nameof(Yield));
        int level = current.Level;
        return new(current.Scheduler, current.FlowAt(level), level, alwaysQueue: true);
    }

    /// <summary>
    /// Waits for <paramref name="delay"/> on a timer kept by the scheduler the caller runs on (a <see cref="PriorityContext"/>'s loop, or
    /// a <see cref="PriorityThreadPool"/>'s threads), then resumes the calling method at its level: the short form of
    /// <c>Task.Delay(delay, scheduler.TimeProvider, cancellationToken)</c>, and allocation-free in steady state. The timer does not
    /// depend on the .NET thread pool: a starved thread pool does not delay it.
    /// </summary>
    /// <param name="delay">How long to wait: from zero to 4294967294 ms, or <see cref="Timeout.InfiniteTimeSpan"/> to wait until cancelled.</param>
    /// <param name="cancellationToken">Cancels the wait; the awaiter then throws <see cref="TaskCanceledException"/> (on the loop).</param>
    /// <returns>A <see cref="ValueTask"/> to await once (it is backed by a pooled object: do not await it twice; call
    /// <see cref="ValueTask.AsTask"/> for that). A zero delay, or an already cancelled token, completes at once.</returns>
    /// <exception cref="InvalidOperationException">The caller is running on neither a <see cref="PriorityContext"/> nor a
    /// <see cref="PriorityThreadPool"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative (other than infinite) or too large, as for <see cref="Task.Delay(TimeSpan)"/>.</exception>
    /// <exception cref="ObjectDisposedException">The scheduler has finished.</exception>
    /// <remarks>
    /// The delay comes due at the next dispatch or checkpoint after its due time (on an idle scheduler, within a millisecond, the
    /// resolution of its timed wait, plus its wake-up); the method then resumes FIFO behind the work already queued at its level. If
    /// the scheduler finishes while the delay is pending, it is dropped (<see cref="DropReason.TimerArmedAtFinish"/>) and the awaiter
    /// throws <see cref="ObjectDisposedException"/> on the .NET thread pool. The clock is <see cref="PrioritySchedulerOptions.TimeProvider"/>,
    /// or <see cref="PrioritySchedulerOptions.TimeProvider"/> on a pool.
    /// </remarks>
    public static ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken = default) =>
        Require(nameof(Delay)).Scheduler.Delay(delay, cancellationToken);

    /// <summary>
    /// A cheap point at which a long computation lets other work in: completes at once, without queueing or allocating, unless work
    /// waits at a level above the caller's, or the running item has used up its time quota (<see cref="PrioritySchedulerOptions.TimeSlice"/>;
    /// on a pool, <see cref="PrioritySchedulerOptions.TimeSlice"/>, per thread) and other work is waiting for it, or, in a host's drain
    /// with a budget (<see cref="PriorityContextDriver.Drain(TimeSpan, int)"/>), the budget is spent; then the rest of the method is
    /// queued at the back of its level. The caller's level does not change. The decision reads flags (no clock read, except in a
    /// host's drain with a budget): see <see cref="ShouldYield"/>.
    /// </summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is running on neither a <see cref="PriorityContext"/> nor a
    /// <see cref="PriorityThreadPool"/>.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static CheckpointAwaitable Checkpoint() => new(Require(nameof(Checkpoint)));

    /// <summary>
    /// Gets whether the calling code should yield now (exactly when <see cref="Checkpoint"/> would queue): work waits at a level above
    /// its own, or the running item has used up its time quota and other work is waiting for it, or a host's drain has spent its
    /// budget (see <see cref="Checkpoint"/>). For
    /// loops that decide for themselves, for example to save their progress before an <c>await Yield()</c>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The caller is running on neither a <see cref="PriorityContext"/> nor a
    /// <see cref="PriorityThreadPool"/>.</exception>
    public static bool ShouldYield
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            PrioritySynchronizationContext current = Require(nameof(ShouldYield));
            return current.Scheduler.ShouldYieldAt(current.EffectiveLevel);
        }
    }

    /// <summary>
    /// Starts <paramref name="child"/> in the root scope of the scheduler the caller runs on (<see cref="PriorityScheduler.Scope"/>), at
    /// the caller's level: the owned form of <c>_ = SomethingAsync()</c>. The scheduler ends only when the child has
    /// (<see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/> returns, <see cref="PriorityScheduler.Completion"/>
    /// completes), a child's failure cancels the others and surfaces there, and the owner's body failing, a hosted worker stopping,
    /// <c>Scope.Cancel()</c> or a fault of the scheduler cancel the children.
    /// </summary>
    /// <param name="child">The child; it receives the root scope's <see cref="TaskScope.CancellationToken"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The caller is not running on a thread of a <see cref="PriorityContext"/> or a
    /// <see cref="PriorityThreadPool"/>, or the scheduler has finished.</exception>
    /// <remarks>For work that belongs to one piece of work rather than to the whole scheduler (a lease keeper that must stop with its
    /// message), open a scope of its own with <see cref="TaskScope.RunAsync(Func{TaskScope, Task}, CancellationToken)"/>.</remarks>
    public static void Start(Func<CancellationToken, Task> child)
    {
        PrioritySynchronizationContext current = Require(nameof(Start));
        current.Scheduler.Scope.Start(child, current.Level);
    }

    /// <summary>Starts <paramref name="child"/> as a root child of the scheduler the caller runs on, at <paramref name="level"/>; see
    /// <see cref="Start(Func{CancellationToken, Task})"/>.</summary>
    /// <param name="child">The child; it receives the root children's cancellation token.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    /// <exception cref="InvalidOperationException">The caller is not running on a thread of a <see cref="PriorityContext"/> or a
    /// <see cref="PriorityThreadPool"/>, or the scheduler has finished.</exception>
    public static void Start(Func<CancellationToken, Task> child, int level) => Require(nameof(Start)).Scheduler.Scope.Start(child, level);

    /// <summary>
    /// Waits for <paramref name="task"/> as for the <see cref="PriorityTask"/> it came from: if a priority scheduler started the work
    /// (<see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>, a scope's child, a controller's <c>Run</c>) and the calling code runs
    /// on the same scheduler at a higher level, the work runs at that level until it completes. For a task kept as a plain
    /// <see cref="Task"/>, which raises nothing when awaited directly.
    /// </summary>
    /// <param name="task">The task to wait for.</param>
    /// <returns>An awaitable for <paramref name="task"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="task"/> is <see langword="null"/>.</exception>
    /// <remarks>A task no priority scheduler started (a <see cref="TaskCompletionSource"/>'s, an I/O call's, a
    /// <see cref="PriorityScheduler.GetTaskFactory(int)"/> task's) names no work the library can raise: it is awaited as is. Start the
    /// code that completes it with <c>InvokeAsync</c>, or guard what it shares with a <see cref="PriorityLock"/>
    /// (docs/concepts.md, "Priority inversion").</remarks>
    public static PriorityTask Join(Task task)
    {
        ArgumentNullException.ThrowIfNull(task);
        return new(task);
    }

    /// <summary>Waits for <paramref name="task"/> and its result as for the <see cref="PriorityTask{TResult}"/> it came from; see
    /// <see cref="Join(Task)"/>.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="task">The task to wait for.</param>
    /// <returns>An awaitable for <paramref name="task"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="task"/> is <see langword="null"/>.</exception>
    public static PriorityTask<TResult> Join<TResult>(Task<TResult> task)
    {
        ArgumentNullException.ThrowIfNull(task);
        return new(task);
    }

    /// <summary>Gets the scheduler the calling code runs in (a <see cref="PriorityContext"/> or a <see cref="PriorityThreadPool"/>), or
    /// <see langword="null"/> outside both.</summary>
    public static PriorityScheduler? CurrentScheduler => (SynchronizationContext.Current as PrioritySynchronizationContext)?.Scheduler;

    /// <summary>Gets the level the calling code runs at, on either scheduler.</summary>
    /// <exception cref="InvalidOperationException">The caller is running on neither a <see cref="PriorityContext"/> nor a
    /// <see cref="PriorityThreadPool"/>.</exception>
    public static int CurrentLevel => Require(nameof(CurrentLevel)).Level;

    /// <summary>The level the caller runs at, on whichever scheduler; or the error that names what it runs on instead.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static PrioritySynchronizationContext Require(string operation) =>
        SynchronizationContext.Current as PrioritySynchronizationContext ?? throw NotOnEitherScheduler(operation);

    /// <summary>A member of <see cref="Priority"/> was called by code that runs on neither scheduler: the message names both, how to
    /// get onto each, and what the caller runs on instead.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static InvalidOperationException NotOnEitherScheduler(string operation) =>
        new($"Priority.{operation} can only be used by code running on a PriorityContext or a PriorityThreadPool, and the calling code " +
            $"runs on neither ({DescribeCurrentSynchronizationContext()}). Start the work on a PriorityContext with PriorityContext.Run(...) " +
            "or a PriorityContextThread, or queue it on a PriorityThreadPool with pool.InvokeAsync(...); running code hops onto either " +
            "with await context.Prioritize(level) or await pool.Prioritize(level).");

    /// <summary>What the calling code runs on, for the messages of code that found no priority scheduler.</summary>
    internal static string DescribeCurrentSynchronizationContext() =>
        SynchronizationContext.Current is { } current
            ? $"SynchronizationContext.Current is a {current.GetType().FullName}"
            : "SynchronizationContext.Current is null: a thread-pool thread or a thread of its own";
}
