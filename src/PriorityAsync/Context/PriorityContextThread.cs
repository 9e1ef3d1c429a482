using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// A dedicated thread that runs a <see cref="PriorityContext"/> loop until <see cref="Complete"/> (or disposal) and all work it
/// queued are done. Queue work onto it with <c>await thread.Context.Prioritize(level)</c>, its schedulers or its synchronization contexts.
/// </summary>
/// <remarks>
/// <para>The thread is a background thread: it does not keep the process alive.</para>
/// <para>Completing is graceful: work already queued, and work that work queues, still runs; the loop stops when no operation is
/// outstanding and the queues are empty. Posts after that are dropped and reported through <see cref="PriorityContext.WorkDropped"/>.</para>
/// <para>An exception escaping a callback raises <see cref="UnhandledException"/>. If no handler sets
/// <see cref="PriorityUnhandledExceptionEventArgs.Handled"/>, the loop stops and <see cref="Completion"/> faults with that exception.</para>
/// </remarks>
public sealed class PriorityContextThread : IAsyncDisposable, IDisposable
{
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Thread _thread;
    private int _completeRequested;

    /// <summary>Creates the context and starts its thread.</summary>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is outside its allowed range.</exception>
    public PriorityContextThread(PriorityContextOptions? options = null)
    {
        Context = new PriorityContext(options);
        Context.OperationStarted(); // this object's hold on the loop, released by Complete()
        _thread = new Thread(ThreadMain)
        {
            IsBackground = true,
            Name = options?.Name ?? nameof(PriorityContextThread),
        };
        _thread.UnsafeStart(); // the loop thread starts in the default context, as a thread-pool thread does (E1), not in its creator's
    }

    /// <summary>Gets the context whose loop this thread runs.</summary>
    public PriorityContext Context { get; }

    /// <summary>Gets the managed thread id of the loop thread.</summary>
    public int ManagedThreadId => _thread.ManagedThreadId;

    /// <summary>Gets a task that completes when the loop has stopped, and faults if it stopped because of an unhandled exception.</summary>
    public Task Completion => _completion.Task;

    /// <summary>Raised on the loop thread when an exception escapes a callback; see <see cref="PriorityContext.UnhandledException"/>.</summary>
    public event EventHandler<PriorityUnhandledExceptionEventArgs>? UnhandledException
    {
        add => Context.UnhandledException += value;
        remove => Context.UnhandledException -= value;
    }

    /// <summary>Lets the loop stop once all queued work and all outstanding operations are done. Idempotent; never blocks.</summary>
    public void Complete()
    {
        if (Interlocked.Exchange(ref _completeRequested, 1) == 0)
        {
            Context.OperationCompleted();
        }
    }

    /// <summary>Completes the loop and waits for it to stop. Rethrows the exception that faulted the loop, if any.</summary>
    /// <returns>A task that completes when the loop has stopped.</returns>
    /// <remarks>Called from the loop thread itself it only completes, and returns a completed task: the loop cannot wait for itself.
    /// That holds whatever the thread runs: an item, or a handler raised there as the loop ends (a
    /// <see cref="PriorityContext.WorkDropped"/> handler for what is left).</remarks>
    public ValueTask DisposeAsync()
    {
        Complete();
        return IsOwnThread ? default : new ValueTask(Completion);
    }

    /// <summary>Completes the loop and blocks until it has stopped. Rethrows the exception that faulted the loop, if any.</summary>
    /// <remarks>Called from the loop thread itself it only completes, whatever the thread runs (an item, or a handler raised there as
    /// the loop ends): the loop cannot wait for itself.</remarks>
    public void Dispose()
    {
        Complete();
        if (!IsOwnThread)
        {
            Completion.GetAwaiter().GetResult();
        }
    }

    /// <summary>Whether the caller runs on this object's thread, in any phase: Completion is completed there after the loop ends, and the
    /// loop stops counting its thread as the loop thread (PriorityContext.IsOnLoopThread) before it drops what is left and raises
    /// WorkDropped, so only the thread's identity tells.</summary>
    private bool IsOwnThread => Thread.CurrentThread == _thread;

    private void ThreadMain()
    {
        try
        {
            Context.RunLoop();
        }
        catch (Exception ex)
        {
            _completion.TrySetException(ex);
            return;
        }

        if (Context.Fault is { } fault)
        {
            _completion.TrySetException(fault.SourceException);
        }
        else if (Context.RootFailures is { } failures)
        {
            _completion.TrySetException(failures); // the root scope's children (Context.Scope), all of them
        }
        else
        {
            _completion.TrySetResult();
        }
    }
}
