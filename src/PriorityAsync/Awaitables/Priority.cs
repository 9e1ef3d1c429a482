using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// Awaitables for code that runs inside a <see cref="PriorityContext"/>. Import with <c>using static PriorityAsync.Priority;</c>
/// to write <c>await Prioritize(2);</c>, <c>await Yield();</c> and <c>await Checkpoint();</c>.
/// </summary>
public static class Priority
{
    /// <summary>
    /// Moves the rest of the calling method to <paramref name="level"/> of the current <see cref="PriorityContext"/>. Later awaits
    /// in the method come back at that level. Completes at once, without queueing or allocating, when nothing is queued at a level
    /// above <paramref name="level"/>; otherwise the rest of the method is queued at <paramref name="level"/>, behind everything
    /// more urgent. It never busy-waits, and it cannot interrupt a callback that is already running.
    /// </summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static PriorityAwaitable Prioritize(int level)
    {
        PrioritySynchronizationContext? current = PriorityContext.CurrentLevelContext;
        if (current is null)
        {
            return RequirePool(nameof(Prioritize)).Pool.Prioritize(level); // off the hot path: the single loop is tested first
        }

        return current.Context.Prioritize(level);
    }

    /// <summary>Queues the rest of the calling method at the back of its current level, letting everything already queued at that level or above run first.</summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    public static PriorityAwaitable Yield()
    {
        PrioritySynchronizationContext? current = PriorityContext.CurrentLevelContext;
        if (current is null)
        {
            PriorityThreadPoolSynchronizationContext pool = RequirePool(nameof(Yield));
            return pool.Pool.Yield(pool.Level);
        }

        return current.Context.Yield(current.Level);
    }

    /// <summary>
    /// Waits for <paramref name="delay"/> on a timer kept by the current <see cref="PriorityContext"/>'s loop, then resumes the calling
    /// method at its level: the short form of <c>Task.Delay(delay, PriorityContext.Current.TimeProvider, cancellationToken)</c>, and
    /// allocation-free in steady state. The timer does not depend on the thread pool: a starved pool does not delay it.
    /// </summary>
    /// <param name="delay">How long to wait: from zero to 4294967294 ms, or <see cref="Timeout.InfiniteTimeSpan"/> to wait until cancelled.</param>
    /// <param name="cancellationToken">Cancels the wait; the awaiter then throws <see cref="TaskCanceledException"/> (on the loop).</param>
    /// <returns>A <see cref="ValueTask"/> to await once (it is backed by a pooled object: do not await it twice; call
    /// <see cref="ValueTask.AsTask"/> for that). A zero delay, or an already cancelled token, completes at once.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="delay"/> is negative (other than infinite) or too large, as for <see cref="Task.Delay(TimeSpan)"/>.</exception>
    /// <exception cref="ObjectDisposedException">The context has finished.</exception>
    /// <remarks>
    /// The delay comes due at the next dispatch or checkpoint after its due time (on an idle loop, within a millisecond, the
    /// resolution of the loop's timed wait, plus its wake-up); the method then resumes FIFO behind the work already queued at its
    /// level. If the context finishes while the delay is pending, it is dropped (<see cref="DropReason.TimerArmedAtFinish"/>) and the
    /// awaiter throws <see cref="ObjectDisposedException"/> on the thread pool. The clock is <see cref="PriorityContextOptions.TimeProvider"/>.
    /// </remarks>
    public static ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken = default) =>
        PriorityContext.Current is { } context
            ? context.Delay(delay, cancellationToken)
            : RequirePool(nameof(Delay)).Pool.Delay(delay, cancellationToken);

    /// <summary>
    /// A cheap point at which a long computation lets other work in: completes at once, without queueing or allocating, unless work
    /// waits at a level above the caller's, or the running item has used up the context's time quota
    /// (<see cref="PriorityContextOptions.TimeSlice"/>) and other work is waiting; then the rest of the method is queued at the back of
    /// its level. The caller's level does not change. The decision reads flags (no clock read): see <see cref="ShouldYield"/>.
    /// </summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static CheckpointAwaitable Checkpoint()
    {
        PrioritySynchronizationContext? current = PriorityContext.CurrentLevelContext;
        if (current is null)
        {
            return PoolCheckpoint(); // a call, not a throw, keeps this method small enough to inline
        }

        return new(current);
    }

    /// <summary>
    /// Gets whether the calling code should yield now (exactly when <see cref="Checkpoint"/> would queue): work waits at a level above
    /// its own, or the running item has used up the context's time quota (<see cref="PriorityContextOptions.TimeSlice"/>) and other
    /// work is waiting. For loops that decide for themselves, for example to save their progress before an <c>await Yield()</c>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    public static bool ShouldYield
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            PrioritySynchronizationContext? current = PriorityContext.CurrentLevelContext;
            if (current is null)
            {
                return PoolShouldYield();
            }

            return current.Context.ShouldYieldAt(current.Level);
        }
    }

    /// <summary>
    /// Starts <paramref name="child"/> as a child of the current context's root scope (<see cref="PriorityContext.Scope"/>), at the
    /// caller's level: the owned form of <c>_ = SomethingAsync()</c>. <see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/>,
    /// a <see cref="PriorityContextThread"/> or a hosted worker waits for it, cancels it when their body fails or they stop, and surfaces
    /// its exception.
    /// </summary>
    /// <param name="child">The child; it receives the root scope's <see cref="TaskScope.CancellationToken"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The caller is not running on the loop of a <see cref="PriorityContext"/>.</exception>
    /// <remarks>For work that belongs to one piece of work rather than to the whole loop (a lease keeper that must stop with its
    /// message), open a scope of its own with <see cref="TaskScope.RunAsync(Func{TaskScope, Task}, CancellationToken)"/>.</remarks>
    public static void Start(Func<CancellationToken, Task> child)
    {
        if (PriorityContext.Current is { } context)
        {
            context.Scope.Start(child);
            return;
        }

        PriorityThreadPoolSynchronizationContext pool = RequirePool(nameof(Start));
        pool.Pool.StartRootChild(child, pool.Level);
    }

    /// <summary>Starts <paramref name="child"/> as a child of the current context's root scope at <paramref name="level"/>; see
    /// <see cref="Start(Func{CancellationToken, Task})"/>.</summary>
    /// <param name="child">The child; it receives the root scope's <see cref="TaskScope.CancellationToken"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <exception cref="InvalidOperationException">The caller is not running on the loop of a <see cref="PriorityContext"/>.</exception>
    public static void Start(Func<CancellationToken, Task> child, int level)
    {
        if (PriorityContext.Current is { } context)
        {
            context.Scope.Start(child, level);
            return;
        }

        RequirePool(nameof(Start)).Pool.StartRootChild(child, level);
    }

    /// <summary>Gets the scheduler the calling code runs in (a <see cref="PriorityContext"/> or a <see cref="PriorityThreadPool"/>), or
    /// <see langword="null"/> outside both.</summary>
    public static IPriorityScheduler? CurrentScheduler => SynchronizationContext.Current switch
    {
        PrioritySynchronizationContext context => context.Context,
        PriorityThreadPoolSynchronizationContext pool => pool.Pool,
        _ => null,
    };

    /// <summary>Gets the level the calling code runs at, on either scheduler.</summary>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/> or a <see cref="PriorityThreadPool"/>.</exception>
    public static int CurrentLevel => SynchronizationContext.Current switch
    {
        PrioritySynchronizationContext context => context.Level,
        PriorityThreadPoolSynchronizationContext pool => pool.Level,
        _ => throw PriorityContext.NotInContext(nameof(CurrentLevel)),
    };

    [DoesNotReturn]
    private static void ThrowNotInContext(string operation) => throw PriorityContext.NotInContext(operation);

    /// <summary>The slow path of every member above: the caller is not on a <see cref="PriorityContext"/>; a pool's level, or throw.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static PriorityThreadPoolSynchronizationContext RequirePool(string operation) =>
        SynchronizationContext.Current as PriorityThreadPoolSynchronizationContext ?? throw PriorityContext.NotInContext(operation);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static CheckpointAwaitable PoolCheckpoint() => new(RequirePool(nameof(Checkpoint)));

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool PoolShouldYield()
    {
        PriorityThreadPoolSynchronizationContext pool = RequirePool(nameof(ShouldYield));
        return pool.Pool.ShouldYieldAt(pool.Level);
    }
}
