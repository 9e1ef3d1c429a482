using System;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// Entry points for code coming from Nito.AsyncEx (AsyncContext.Run(Func<T>), AsyncContext.Factory.Run(async () => ...)), named
// after Dispatcher.InvokeAsync. See docs/migrating-from-asynccontext.md.
public sealed partial class PriorityContext
{
    /// <summary>Runs the synchronous <paramref name="entry"/> inside a new priority context on the calling thread, and returns its
    /// result once it and all <c>async void</c> work it started are done.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="entry">The entry point; it starts at <see cref="PriorityContextOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <returns>The value <paramref name="entry"/> returned.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context.</exception>
    /// <remarks>An exception thrown by <paramref name="entry"/>, or escaping an <c>async void</c> method and not handled through
    /// <see cref="UnhandledException"/>, is rethrown here as is. For an asynchronous entry point the
    /// <see cref="Run{TResult}(Func{Task{TResult}}, PriorityContextOptions?)"/> overload is chosen (it awaits the task).</remarks>
    public static TResult Run<TResult>(Func<TResult> entry, PriorityContextOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(entry);
        TResult result = default!;
        RunCore(
            () =>
            {
                result = entry();
                return Task.CompletedTask;
            },
            options).GetAwaiter().GetResult();
        return result;
    }

    /// <summary>Queues <paramref name="work"/> at <see cref="DefaultLevel"/> and returns a task that completes as the task
    /// <paramref name="work"/> returns does.</summary>
    /// <param name="work">The asynchronous work; it starts on the loop thread, and its awaits resume at <see cref="DefaultLevel"/>.</param>
    /// <returns>The work's own task, unwrapped: its exception, cancellation or completion.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <remarks>See <see cref="InvokeAsync(Func{Task}, int)"/>.</remarks>
    public Task InvokeAsync(Func<Task> work) => InvokeAsync(work, DefaultLevel);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/> and returns a task that completes as the task
    /// <paramref name="work"/> returns does: the one-call form of <c>GetTaskFactory(level).StartNew(work).Unwrap()</c> (AsyncEx's
    /// <c>Factory.Run(async () => ...)</c>, WPF's and Avalonia's <c>Dispatcher.InvokeAsync</c>).</summary>
    /// <param name="work">The asynchronous work; it starts on the loop thread, and its awaits resume at <paramref name="level"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The work's own task, unwrapped: its exception, cancellation or completion.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <remarks>
    /// <para>Callable from any thread, the loop thread included; the work is always queued (never run inline), behind what is already
    /// queued at <paramref name="level"/>. An exception thrown by <paramref name="work"/> goes into the returned task, never to
    /// <see cref="UnhandledException"/>.</para>
    /// <para>Until the work's task completes, the context counts it as an outstanding operation (as an <c>async void</c> method): the
    /// loop of <see cref="Run(Func{Task}, PriorityContextOptions?)"/> or of a completed <see cref="PriorityContextThread"/> does not
    /// end under it.</para>
    /// <para>Never hangs: when the context has finished (or finishes before the work could run), the work does not run, the returned
    /// task faults with <see cref="ObjectDisposedException"/>, and the drop is counted and raised through <see cref="WorkDropped"/> as
    /// for a late <c>Post</c> (a throwing <see cref="WorkDropped"/> handler's exception reaches the caller).</para>
    /// <para>Allocates the returned task and one object that carries the work (together 136 bytes on x64), plus one delegate when the
    /// work completes asynchronously, and whatever the work itself allocates.</para>
    /// </remarks>
    public Task InvokeAsync(Func<Task> work, int level)
    {
        ArgumentNullException.ThrowIfNull(work);
        ValidateLevel(level);
        var operation = new InvokeOperation<object?>(this, level, work, hasResult: false);
        Enqueue(level, IInvokeOperation.RunCallback, operation, ExecutionContextFlow.Capture());
        return operation.Task;
    }

    /// <summary>Queues <paramref name="work"/> at <see cref="DefaultLevel"/> and returns a task that completes with the result of the
    /// task <paramref name="work"/> returns.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work; it starts on the loop thread, and its awaits resume at <see cref="DefaultLevel"/>.</param>
    /// <returns>The work's own task, unwrapped: its result, exception or cancellation.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <remarks>See <see cref="InvokeAsync(Func{Task}, int)"/>.</remarks>
    public Task<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work) => InvokeAsync(work, DefaultLevel);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/> and returns a task that completes with the result of the
    /// task <paramref name="work"/> returns.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work; it starts on the loop thread, and its awaits resume at <paramref name="level"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The work's own task, unwrapped: its result, exception or cancellation.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <remarks>See <see cref="InvokeAsync(Func{Task}, int)"/>: the same rules and costs.</remarks>
    public Task<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work, int level)
    {
        ArgumentNullException.ThrowIfNull(work);
        ValidateLevel(level);
        var operation = new InvokeOperation<TResult>(this, level, work, hasResult: true);
        Enqueue(level, IInvokeOperation.RunCallback, operation, ExecutionContextFlow.Capture());
        return operation.Task;
    }
}
