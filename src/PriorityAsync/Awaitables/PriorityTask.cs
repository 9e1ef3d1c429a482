using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// The task of work a priority scheduler started (<see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>, a scope's child, a
/// controller's <c>Run</c>): awaiting it from code at a higher level of the same scheduler runs the work at that level until it
/// completes, so urgent code never waits behind the work it does not wait for (docs/concepts.md, "Priority inversion").
/// </summary>
/// <remarks>
/// <para>Await it, or convert it to the <see cref="System.Threading.Tasks.Task"/> it wraps (<see cref="Task"/>, or implicitly): a plain
/// <see cref="System.Threading.Tasks.Task"/> raises nothing when awaited, since .NET tells no one that a task is awaited. To wait on such
/// a task of the scheduler's work and raise it, use <see cref="Priority.Join(System.Threading.Tasks.Task)"/>.</para>
/// <para>Awaiting it allocates nothing more than awaiting the task would when the work is not behind the awaiting code; otherwise one
/// small object for the wait, until the work completes.</para>
/// <para>The <see langword="default"/> value is a completed task.</para>
/// </remarks>
public readonly struct PriorityTask
{
    private readonly Task? _task;

    internal PriorityTask(Task task) => _task = task;

    /// <summary>Gets the task this wraps (awaiting it directly raises nothing).</summary>
    public Task Task => _task ?? Task.CompletedTask;

    /// <summary>Gets whether the work has completed.</summary>
    public bool IsCompleted => Task.IsCompleted;

    /// <summary>Gets the task this wraps.</summary>
    /// <param name="task">The priority task.</param>
    public static implicit operator Task(PriorityTask task) => task.Task;

    /// <summary>Gets the awaiter: the work is raised to the awaiting code's level while it waits.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(Task, continueOnCapturedContext: true);

    /// <summary>A task that completes when every one of <paramref name="tasks"/> has, as <see cref="Task.WhenAll(IEnumerable{Task})"/>;
    /// the calling code waits on each of them from now on, so each runs at least at its level until it completes.</summary>
    /// <param name="tasks">The work to wait for.</param>
    /// <returns>A task with every failure of the work (the first rethrown by an <c>await</c>).</returns>
    /// <remarks>It completes through the calling code's context (on a loop, at the caller's level), never through the thread pool:
    /// <see cref="Task.WhenAll(IEnumerable{Task})"/> over these tasks completes on a pool thread, since the work's tasks do not run the
    /// continuations of other code on the scheduler's thread.</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="tasks"/> is <see langword="null"/>.</exception>
    public static Task WhenAll(IEnumerable<PriorityTask> tasks)
    {
        ArgumentNullException.ThrowIfNull(tasks);
        var all = new List<Task>();
        foreach (PriorityTask task in tasks)
        {
            Joins.Join(task.Task);
            all.Add(task.Task);
        }

        return WhenAllHere(all);
    }

    /// <summary>A task that completes with every result of <paramref name="tasks"/>, in order, as
    /// <see cref="Task.WhenAll{TResult}(IEnumerable{Task{TResult}})"/>; the calling code waits on each of them from now on.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="tasks">The work to wait for.</param>
    /// <returns>A task with the results, or every failure of the work.</returns>
    /// <remarks>It completes through the calling code's context, never through the thread pool (see
    /// <see cref="WhenAll(IEnumerable{PriorityTask})"/>).</remarks>
    /// <exception cref="ArgumentNullException"><paramref name="tasks"/> is <see langword="null"/>.</exception>
    public static Task<TResult[]> WhenAll<TResult>(IEnumerable<PriorityTask<TResult>> tasks)
    {
        ArgumentNullException.ThrowIfNull(tasks);
        var all = new List<Task<TResult>>();
        foreach (PriorityTask<TResult> task in tasks)
        {
            Joins.Join(task.Task);
            all.Add(task.Task);
        }

        return WhenAllHere(all);
    }

    // Each await comes back through the caller's context (a post on a loop, at its level); once all are done, Task.WhenAll is complete
    // at once, with every failure (unwrapped as is: an async method would keep only the first).
    private static Task WhenAllHere(List<Task> all) => AwaitEach(all).Unwrap();

    private static Task<TResult[]> WhenAllHere<TResult>(List<Task<TResult>> all) => AwaitEach(all).Unwrap();

    private static async Task<Task> AwaitEach(List<Task> all)
    {
        foreach (Task task in all)
        {
            await task.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
        }

        return Task.WhenAll(all);
    }

    private static async Task<Task<TResult[]>> AwaitEach<TResult>(List<Task<TResult>> all)
    {
        foreach (Task task in all)
        {
            await task.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext | ConfigureAwaitOptions.SuppressThrowing);
        }

        return Task.WhenAll(all);
    }

    /// <summary>Configures how the awaiting code comes back, as <see cref="Task.ConfigureAwait(bool)"/>; the work is raised either way.</summary>
    /// <param name="continueOnCapturedContext">Whether to come back in the captured context (and so at the awaiting code's level).</param>
    /// <returns>An awaitable.</returns>
    public ConfiguredAwaitable ConfigureAwait(bool continueOnCapturedContext) => new(Task, continueOnCapturedContext);

    /// <summary>The awaitable of <see cref="ConfigureAwait(bool)"/>.</summary>
    public readonly struct ConfiguredAwaitable
    {
        private readonly Task _task;
        private readonly bool _continueOnCapturedContext;

        internal ConfiguredAwaitable(Task task, bool continueOnCapturedContext)
        {
            _task = task;
            _continueOnCapturedContext = continueOnCapturedContext;
        }

        /// <summary>Gets the awaiter.</summary>
        /// <returns>The awaiter.</returns>
        public Awaiter GetAwaiter() => new(_task, _continueOnCapturedContext);
    }

    /// <summary>The awaiter of <see cref="PriorityTask"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Task _task;
        private readonly bool _continueOnCapturedContext;

        internal Awaiter(Task task, bool continueOnCapturedContext)
        {
            _task = task;
            _continueOnCapturedContext = continueOnCapturedContext;
        }

        /// <summary>Gets whether the work has completed.</summary>
        public bool IsCompleted => _task.IsCompleted;

        /// <summary>Raises the work to the calling code's level, then schedules the continuation as the task's awaiter does.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation)
        {
            Joins.Join(_task);
            _task.ConfigureAwait(_continueOnCapturedContext).GetAwaiter().OnCompleted(continuation);
        }

        /// <summary>Raises the work to the calling code's level, then schedules the continuation as the task's awaiter does, without
        /// flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void UnsafeOnCompleted(Action continuation)
        {
            Joins.Join(_task);
            _task.ConfigureAwait(_continueOnCapturedContext).GetAwaiter().UnsafeOnCompleted(continuation);
        }

        /// <summary>Ends the await: rethrows the work's exception (the first, unwrapped) or its cancellation.</summary>
        public void GetResult() => _task.GetAwaiter().GetResult();
    }
}

/// <summary>
/// The task of work a priority scheduler started, with a result; see <see cref="PriorityTask"/>: awaiting it from code at a higher level
/// of the same scheduler runs the work at that level until it completes.
/// </summary>
/// <typeparam name="TResult">The result type.</typeparam>
/// <remarks>The <see langword="default"/> value is a task completed with the default result.</remarks>
public readonly struct PriorityTask<TResult>
{
    private readonly Task<TResult>? _task;

    internal PriorityTask(Task<TResult> task) => _task = task;

    /// <summary>Gets the task this wraps (awaiting it directly raises nothing).</summary>
    public Task<TResult> Task => _task ?? System.Threading.Tasks.Task.FromResult<TResult>(default!);

    /// <summary>Gets whether the work has completed.</summary>
    public bool IsCompleted => Task.IsCompleted;

    /// <summary>Gets the task this wraps.</summary>
    /// <param name="task">The priority task.</param>
    public static implicit operator Task<TResult>(PriorityTask<TResult> task) => task.Task;

    /// <summary>Gets the same work without its result.</summary>
    /// <param name="task">The priority task.</param>
    public static implicit operator PriorityTask(PriorityTask<TResult> task) => new(task.Task);

    /// <summary>Gets the awaiter: the work is raised to the awaiting code's level while it waits.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(Task, continueOnCapturedContext: true);

    /// <summary>Configures how the awaiting code comes back, as <see cref="Task{TResult}.ConfigureAwait(bool)"/>; the work is raised either way.</summary>
    /// <param name="continueOnCapturedContext">Whether to come back in the captured context (and so at the awaiting code's level).</param>
    /// <returns>An awaitable.</returns>
    public ConfiguredAwaitable ConfigureAwait(bool continueOnCapturedContext) => new(Task, continueOnCapturedContext);

    /// <summary>The awaitable of <see cref="ConfigureAwait(bool)"/>.</summary>
    public readonly struct ConfiguredAwaitable
    {
        private readonly Task<TResult> _task;
        private readonly bool _continueOnCapturedContext;

        internal ConfiguredAwaitable(Task<TResult> task, bool continueOnCapturedContext)
        {
            _task = task;
            _continueOnCapturedContext = continueOnCapturedContext;
        }

        /// <summary>Gets the awaiter.</summary>
        /// <returns>The awaiter.</returns>
        public Awaiter GetAwaiter() => new(_task, _continueOnCapturedContext);
    }

    /// <summary>The awaiter of <see cref="PriorityTask{TResult}"/>. Used by the compiler; not meant to be called directly.</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Task<TResult> _task;
        private readonly bool _continueOnCapturedContext;

        internal Awaiter(Task<TResult> task, bool continueOnCapturedContext)
        {
            _task = task;
            _continueOnCapturedContext = continueOnCapturedContext;
        }

        /// <summary>Gets whether the work has completed.</summary>
        public bool IsCompleted => _task.IsCompleted;

        /// <summary>Raises the work to the calling code's level, then schedules the continuation as the task's awaiter does.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation)
        {
            Joins.Join(_task);
            _task.ConfigureAwait(_continueOnCapturedContext).GetAwaiter().OnCompleted(continuation);
        }

        /// <summary>Raises the work to the calling code's level, then schedules the continuation as the task's awaiter does, without
        /// flowing the <see cref="System.Threading.ExecutionContext"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void UnsafeOnCompleted(Action continuation)
        {
            Joins.Join(_task);
            _task.ConfigureAwait(_continueOnCapturedContext).GetAwaiter().UnsafeOnCompleted(continuation);
        }

        /// <summary>Ends the await: the work's result, or its exception (the first, unwrapped) or cancellation.</summary>
        /// <returns>The result.</returns>
        public TResult GetResult() => _task.GetAwaiter().GetResult();
    }
}
