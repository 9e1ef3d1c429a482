using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync;

/// <summary>
/// A <see cref="PriorityContext"/> whose loop runs on a dedicated background thread, for code that must keep its own thread (Nito.AsyncEx's
/// <c>AsyncContextThread</c>). Hand work over with <c>Context.InvokeAsync</c>, or hop onto it with <c>await Context.Prioritize(level)</c>.
/// </summary>
/// <remarks>The loop runs until <see cref="Complete"/> (or disposal) and until all work it was given is done; <see cref="Completion"/>
/// then completes. Every member may be called from any thread.</remarks>
public sealed class PriorityContextThread : IAsyncDisposable, IDisposable
{
    private readonly Thread _thread;

    /// <summary>Creates the context and starts its loop thread.</summary>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults; the thread is named after <see cref="PrioritySchedulerOptions.Name"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is outside its allowed range.</exception>
    public PriorityContextThread(PriorityContextOptions? options = null)
    {
        Context = new PriorityContext(options); // its owner's hold is this object's, released by Complete ([E-LIFE])
        _thread = new Thread(ThreadMain)
        {
            IsBackground = true,
            Name = options?.Name ?? nameof(PriorityContextThread),
        };
        _thread.UnsafeStart(); // the loop thread starts in the default context, as a thread-pool thread does ([E-FLOW]), not in its creator's
    }

    /// <summary>Gets the context whose loop runs on the thread.</summary>
    public PriorityContext Context { get; }

    /// <summary>Gets the managed thread id of the loop thread.</summary>
    public int ManagedThreadId => _thread.ManagedThreadId;

    /// <summary>Gets a task that completes when the loop has ended: <see cref="PriorityScheduler.Completion"/> of <see cref="Context"/>.</summary>
    public Task Completion => Context.Completion;

    /// <summary>Raised on the loop thread when a callback escapes with an exception (the context's <see cref="PriorityScheduler.UnhandledException"/>).</summary>
    public event EventHandler<PriorityUnhandledExceptionEventArgs>? UnhandledException
    {
        add => Context.UnhandledException += value;
        remove => Context.UnhandledException -= value;
    }

    /// <summary>Lets the loop end once all its work is done. Idempotent; never blocks.</summary>
    public void Complete() => Context.ReleaseOwnerHold();

    /// <summary>Completes the loop and returns a task that completes when it has ended (a completed task on the loop thread itself,
    /// which cannot wait for its own loop).</summary>
    /// <returns>A task that completes when the loop has ended, with its outcome.</returns>
    public ValueTask DisposeAsync() => Context.CompleteAndWaitAsync();

    /// <summary>Completes the loop and blocks until it has ended, rethrowing what stopped it (nothing on the loop thread itself, which
    /// cannot wait for its own loop: there it only completes). Unlike Nito.AsyncEx's <c>AsyncContextThread.Dispose</c>, which returns at
    /// once, this waits: a <c>using</c> block ends when the loop has.</summary>
    public void Dispose() => Context.CompleteAndWait();

    // The outcome (a fault, a WorkDropped handler's exception as the loop ended) is in Completion: nothing here throws it.
    private void ThreadMain() => _ = Context.RunLoop();
}
