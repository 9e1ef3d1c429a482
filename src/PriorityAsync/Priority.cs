using System;

namespace PriorityAsync;

/// <summary>
/// Awaitables for code that runs inside a <see cref="PriorityContext"/>. Import with <c>using static PriorityAsync.Priority;</c>
/// to write <c>await Prioritize(2);</c> and <c>await Yield();</c>.
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
    public static PriorityAwaitable Prioritize(int level) => RequireCurrent(nameof(Prioritize)).Prioritize(level);

    /// <summary>Queues the rest of the calling method at the back of its current level, letting everything already queued at that level or above run first.</summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    public static PriorityAwaitable Yield()
    {
        PrioritySynchronizationContext current = PriorityContext.CurrentLevelContext
            ?? throw PriorityContext.NotInContext(nameof(Yield));
        return current.Context.Yield(current.Level);
    }

    private static PriorityContext RequireCurrent(string operation) =>
        PriorityContext.Current ?? throw PriorityContext.NotInContext(operation);
}
