using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// What both priority schedulers offer: the single-threaded <see cref="PriorityContext"/> and the multi-threaded
/// <see cref="PriorityThreadPool"/>. Code that only hands work over (a hosted worker, a library that takes "a priority scheduler")
/// can take this interface and run on either.
/// </summary>
/// <remarks>
/// <para>Thread safety: every member may be called from any thread.</para>
/// <para>What differs is concurrency (<see cref="MaximumConcurrency"/>): on a <see cref="PriorityContext"/> no two callbacks run at
/// once; on a <see cref="PriorityThreadPool"/> up to its thread count do, so code run there must be thread-safe.</para>
/// </remarks>
public interface IPriorityScheduler
{
    /// <summary>Gets the name given in the options, for diagnostics.</summary>
    string Name { get; }

    /// <summary>Gets the number of levels; they are numbered 0 to <c>Levels - 1</c>, and a higher number runs first.</summary>
    int Levels { get; }

    /// <summary>Gets the level <c>InvokeAsync</c> without a level (and an entry point) starts at.</summary>
    int DefaultLevel { get; }

    /// <summary>Gets how many callbacks may run at once: 1 for a <see cref="PriorityContext"/>, the thread count for a
    /// <see cref="PriorityThreadPool"/>.</summary>
    int MaximumConcurrency { get; }

    /// <summary>Gets the state of the scheduler.</summary>
    PriorityContextState State { get; }

    /// <summary>Gets the clock whose timers are fired by the scheduler itself, at <see cref="DefaultLevel"/>.</summary>
    TimeProvider TimeProvider { get; }

    /// <summary>Moves the rest of the calling method onto the scheduler at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>An awaitable.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    PriorityAwaitable Prioritize(int level);

    /// <summary>Queues the rest of the calling method at the back of <paramref name="level"/>, always.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>An awaitable.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    PriorityAwaitable Yield(int level);

    /// <summary>Gets the cached <see cref="SynchronizationContext"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    SynchronizationContext GetSynchronizationContext(int level);

    /// <summary>Gets the cached <see cref="TaskScheduler"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    TaskScheduler GetScheduler(int level);

    /// <summary>Gets a cached <see cref="TaskFactory"/> whose tasks run at <paramref name="level"/> (its scheduler hidden inside them).</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    TaskFactory GetTaskFactory(int level);

    /// <summary>Gets a <see cref="System.TimeProvider"/> whose timers fire at <paramref name="level"/>, on the scheduler.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    TimeProvider GetTimeProvider(int level);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/> and returns its own task, unwrapped.</summary>
    /// <param name="work">The asynchronous work; its awaits resume at <paramref name="level"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The work's task: its exception, cancellation or completion; faulted with <see cref="ObjectDisposedException"/> when the
    /// scheduler finished before the work could run.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    Task InvokeAsync(Func<Task> work, int level);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/> and returns its own task, unwrapped.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work; its awaits resume at <paramref name="level"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The work's task.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    Task<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work, int level);

    /// <summary>Takes a moment's snapshot of the queues and counters, for diagnostics.</summary>
    /// <returns>A new snapshot.</returns>
    PriorityContextSnapshot GetSnapshot();

    /// <summary>Raised for every callback the scheduler will never run (posted after it finished, or still queued when it faulted).</summary>
    event EventHandler<WorkDroppedEventArgs>? WorkDropped;

    /// <summary>Raised when a callback escapes with an exception; set <see cref="PriorityUnhandledExceptionEventArgs.Handled"/> to go on.</summary>
    event EventHandler<PriorityUnhandledExceptionEventArgs>? UnhandledException;

    /// <summary>Raised on the watchdog thread when work waits and the scheduler (or one of its threads) has started nothing for the stall timeout.</summary>
    event EventHandler<StallDetectedEventArgs>? StallDetected;
}
