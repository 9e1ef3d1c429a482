using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A handle on work that belongs together (WICG's <c>TaskController</c>, WPF's <c>DispatcherOperation.Priority</c>): callbacks, tasks
/// and the continuations of async methods started under it run on its <see cref="PriorityContext"/> at the controller's
/// <see cref="Level"/>; <see cref="SetLevel"/> moves the work still queued to another level, keeping its order; <see cref="Cancel"/>
/// drops it (each item counted and reported through <see cref="PriorityScheduler.WorkDropped"/> with <see cref="DropReason.Cancelled"/>).
/// </summary>
/// <remarks>
/// <para>Create one with <see cref="PriorityContext.CreateController(int)"/>. Start work under it with <see cref="Post(SendOrPostCallback, object?)"/>,
/// <see cref="Run(Func{Task})"/>, <see cref="Factory"/> or <see cref="Scheduler"/>, or by posting to its <see cref="SynchronizationContext"/>.
/// The work runs with that synchronization context current, so an <c>await</c> inside it comes back through the controller: a later
/// <see cref="SetLevel"/> moves the continuation too, and after <see cref="Cancel"/> it is dropped. An explicit
/// <c>await Prioritize(level)</c> or <c>Yield()</c> inside the work leaves the controller for that level of the context, as it names a
/// level of its own; <see cref="Priority.Delay"/> resumes through the controller.</para>
/// <para>Scheduling: the controller's queued items take one place in the FIFO of its level. When that place comes up, the oldest
/// item runs, and if more remain the controller takes a new place at the back of its level. So its items run in the order they were
/// queued, one at a time, interleaved with the other work of the same level as if each had been posted when the previous one ran.
/// <see cref="SetLevel"/> puts that place at the back of the new level.</para>
/// <para>Cost: a post takes an uncontended lock and queues into the controller's own FIFO; each item then costs one more loop item
/// (its activation). Steady-state posting and running allocate nothing. Work that does not use a controller pays nothing for it.
/// See docs/benchmarks.md.</para>
/// <para>Thread safety: every member may be called from any thread.</para>
/// </remarks>
public sealed class PriorityTaskController
{
    // [C-CONTROLLER]: _queue, _current, _pending, _level, _closed, _closeReason and _operations under _lock. While _queue is not
    // empty, exactly one copy of _current is on its way to the loop; an item leaves _queue once, run or dropped. No user code and no
    // Context.Enqueue under _lock.

    private readonly Lock _lock = new();
    private readonly ControllerSynchronizationContext _syncContext;
    private readonly ControllerTaskScheduler _scheduler;
    private readonly CancellationTokenSource _cancellation = new();
    private Queue<WorkItem> _queue = new();
    private ControllerActivation? _current;
    private bool _pending;
    private int _level;
    private int _activeLevel; // where _current is queued: _level, or higher while the controller is raised ([X-GRAPH])
    private bool _closed;
    private DropReason _closeReason;
    private int _operations;

    /// <summary>Creates a controller whose work runs on <paramref name="context"/> at <paramref name="level"/>.</summary>
    /// <param name="context">The context the work runs on.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <exception cref="ArgumentNullException"><paramref name="context"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <exception cref="ObjectDisposedException">The context has finished.</exception>
    public PriorityTaskController(PriorityContext context, int level)
    {
        ArgumentNullException.ThrowIfNull(context);
        context.ValidateLevel(level);
        context.ThrowIfFinished("a new PriorityTaskController", level);
        Context = context;
        _level = _activeLevel = level;
        _current = new ControllerActivation(this);
        Node = new ControllerNode(this);
        _syncContext = new ControllerSynchronizationContext(this, level);
        _scheduler = new ControllerTaskScheduler(this);
        Factory = new TaskFactory(
            _cancellation.Token, TaskCreationOptions.HideScheduler, TaskContinuationOptions.HideScheduler, _scheduler);
    }

    /// <summary>Gets the context the work runs on.</summary>
    public PriorityContext Context { get; }

    /// <summary>Gets the level the controller's work runs at now.</summary>
    public int Level
    {
        get
        {
            lock (_lock)
            {
                return _level;
            }
        }
    }

    /// <summary>The controller's level, read without its lock (the escalation graph reads it under its own lock).</summary>
    internal int LevelNow => Volatile.Read(ref _level);

    /// <summary>The controller in the escalation graph: waits on its work raise it ([X-GRAPH]).</summary>
    internal ControllerNode Node { get; }

    /// <summary>Gets whether <see cref="Cancel"/> was called.</summary>
    public bool IsCancelled => _cancellation.IsCancellationRequested;

    /// <summary>Gets a token that is cancelled by <see cref="Cancel"/>, for work that stops cooperatively (the tasks of
    /// <see cref="Factory"/> carry it).</summary>
    public CancellationToken Token => _cancellation.Token;

    /// <summary>Gets the number of items queued under the controller and not run yet (a moment's snapshot).</summary>
    public int PendingCount
    {
        get
        {
            lock (_lock)
            {
                return _queue.Count;
            }
        }
    }

    /// <summary>Gets the controller's <see cref="System.Threading.SynchronizationContext"/>: callbacks posted to it are queued under the
    /// controller, and its work runs with it current (so awaits inside come back through the controller). Its
    /// <see cref="PrioritySynchronizationContext.Level"/> follows <see cref="Level"/>.</summary>
    public PrioritySynchronizationContext SynchronizationContext => _syncContext;

    /// <summary>Gets a <see cref="TaskScheduler"/> that queues tasks under the controller.</summary>
    /// <remarks>Queueing a task after the context finished throws <see cref="ObjectDisposedException"/> (wrapped in a
    /// <see cref="TaskSchedulerException"/> by <see cref="TaskFactory.StartNew(Action)"/>), as <see cref="PriorityTaskScheduler"/> does.
    /// A task dropped by <see cref="Cancel"/> is reported with the task as its state; it completes (cancelled) only if it carries
    /// <see cref="Token"/>, as the tasks of <see cref="Factory"/> do.</remarks>
    public TaskScheduler Scheduler => _scheduler;

    /// <summary>Gets a <see cref="TaskFactory"/> whose tasks run under the controller and carry <see cref="Token"/>.</summary>
    /// <remarks>As <see cref="PriorityScheduler.GetTaskFactory(int)"/>, it hides its scheduler from the tasks it starts.</remarks>
    public TaskFactory Factory { get; }

    /// <summary>Queues <paramref name="callback"/> under the controller, at the back of its FIFO. Never blocks.</summary>
    /// <param name="callback">The callback.</param>
    /// <param name="state">The state passed to the callback.</param>
    /// <exception cref="ArgumentNullException"><paramref name="callback"/> is <see langword="null"/>.</exception>
    /// <remarks>After <see cref="Cancel"/>, or once the context has finished, the callback does not run: it is counted and reported through
    /// <see cref="PriorityScheduler.WorkDropped"/> (as a late <see cref="PrioritySynchronizationContext.Post"/> is); a throwing handler's
    /// exception then reaches the caller.</remarks>
    public void Post(SendOrPostCallback callback, object? state)
    {
        ArgumentNullException.ThrowIfNull(callback);
        Enqueue(callback, state, ExecutionContextFlow.Capture());
    }

    /// <summary>Queues <paramref name="action"/> under the controller, at the back of its FIFO. Never blocks.</summary>
    /// <param name="action">The action.</param>
    /// <exception cref="ArgumentNullException"><paramref name="action"/> is <see langword="null"/>.</exception>
    /// <remarks>See <see cref="Post(SendOrPostCallback, object?)"/>.</remarks>
    public void Post(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        Enqueue(PriorityScheduler.s_runAction, action, ExecutionContextFlow.Capture());
    }

    /// <summary>Queues <paramref name="work"/> under the controller and returns a task that completes as the task it returns does.</summary>
    /// <param name="work">The asynchronous work; it starts on the loop thread, and its awaits come back through the controller.</param>
    /// <returns>The work's own task, unwrapped. Cancelled (with <see cref="Token"/>) when the controller is cancelled before the work
    /// completed; faulted with <see cref="ObjectDisposedException"/> when the context finished before the work could run.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <remarks>Until the work's task completes (or the controller is cancelled), it keeps the loop alive, as
    /// <see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/> does. Awaiting the task from code at a higher level raises the whole
    /// controller to that level until the work completes ([X-JOIN]).</remarks>
    public PriorityTask Run(Func<Task> work)
    {
        ArgumentNullException.ThrowIfNull(work);
        var operation = new ControllerRunOperation<object?>(this, work, hasResult: false);
        Enqueue(IControllerRun.Callback, operation, ExecutionContextFlow.Capture());
        return new PriorityTask(operation.Task);
    }

    /// <summary>Queues <paramref name="work"/> under the controller and returns a task that completes with the result of the task it returns.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work; it starts on the loop thread, and its awaits come back through the controller.</param>
    /// <returns>The work's own task, unwrapped; see <see cref="Run(Func{Task})"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    public PriorityTask<TResult> Run<TResult>(Func<Task<TResult>> work)
    {
        ArgumentNullException.ThrowIfNull(work);
        var operation = new ControllerRunOperation<TResult>(this, work, hasResult: true);
        Enqueue(IControllerRun.Callback, operation, ExecutionContextFlow.Capture());
        return new PriorityTask<TResult>(operation.Task);
    }

    /// <summary>
    /// Moves the controller to <paramref name="level"/>: its queued items, in their order, and everything queued under it from now on
    /// (continuations of its async methods included) run at <paramref name="level"/>. The queued items go behind the work already queued
    /// at <paramref name="level"/>. Setting the level it already has does nothing (its items keep their place).
    /// </summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <exception cref="ObjectDisposedException">The context has finished.</exception>
    /// <remarks>An item already running is not affected. Allocates one small object when items are queued (the new activation).</remarks>
    public void SetLevel(int level)
    {
        Context.ValidateLevel(level);
        Context.ThrowIfFinished($"{nameof(PriorityTaskController)}.{nameof(SetLevel)}", level);
        lock (_lock)
        {
            if (level == _level)
            {
                return;
            }

            _level = level;
            _syncContext.SetLevel(level);
        }

        Reactivate();
    }

    /// <summary>The controller's floor changed ([X-GRAPH]): its place moves to the raised level, or back, as for <see cref="SetLevel"/>.</summary>
    internal void OnFloorChanged() => Reactivate();

    /// <summary>Queues the controller's place at its active level (its level, or its floor if higher) when that changed: a new
    /// generation at the new level ([C-CONTROLLER] holds again once we queue it); the old one goes stale.</summary>
    private void Reactivate()
    {
        ControllerActivation? activation = null;
        int level;
        lock (_lock)
        {
            level = Math.Max(_level, Node.Floor);
            if (level == _activeLevel)
            {
                return;
            }

            _activeLevel = level;
            if (_pending)
            {
                activation = _current = new ControllerActivation(this);
            }
        }

        if (activation is not null)
        {
            Context.Enqueue(level, ControllerActivation.Callback, activation);
        }
    }

    /// <summary>
    /// Cancels the controller: every item queued under it is dropped (counted, and reported through
    /// <see cref="PriorityScheduler.WorkDropped"/> with <see cref="DropReason.Cancelled"/>, oldest first), <see cref="Token"/> is cancelled,
    /// and everything posted under it from now on is dropped and reported the same way. Calling it again does nothing.
    /// </summary>
    /// <remarks>
    /// <para>An item already running goes on; it can watch <see cref="Token"/>. The continuations of async methods started under the
    /// controller are dropped too, so such a method may never complete: the controller stops holding the loop for them (the loop of
    /// <see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/> does not wait for them), and the tasks of <see cref="Run(Func{Task})"/>
    /// are cancelled.</para>
    /// <para>The items taken by Cancel are reported on the calling thread, oldest first; a post racing it from another thread is
    /// dropped and reported by its own poster, so the two reports may interleave.</para>
    /// <para>If a <see cref="PriorityScheduler.WorkDropped"/> handler or a callback registered on <see cref="Token"/> throws, every item is
    /// still dropped first; then the first exception is rethrown.</para>
    /// </remarks>
    public void Cancel()
    {
        Close(DropReason.Cancelled, expected: null);
    }

    /// <summary>Describes the controller.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Context.Name} controller at level {Level}{(IsCancelled ? " (cancelled)" : string.Empty)}";

    // ---- Queueing and running ---------------------------------------------------------------------------------------------

    /// <summary>Queues an item under the controller. <paramref name="executionContext"/>: the context it runs in ([E-FLOW]), captured by
    /// the public entry points for plain callbacks, null for tasks and unflowed continuations.</summary>
    internal void Enqueue(SendOrPostCallback callback, object? state, ExecutionContext? executionContext)
    {
        var item = new WorkItem(callback, state, executionContext);
        ControllerActivation? activation = null;
        bool closed;
        int level;
        DropReason reason;
        lock (_lock)
        {
            closed = _closed;
            if (!closed)
            {
                _queue.Enqueue(item);
                if (!_pending)
                {
                    _pending = true; // [C-CONTROLLER]: we queue _current below
                    activation = _current;
                }
            }

            level = _activeLevel;
            reason = _closeReason;
        }

        if (closed)
        {
            DropOne(level, item, reason)?.Throw(); // a post after the close ([C-CONTROLLER])
        }
        else if (activation is not null)
        {
            Context.Enqueue(level, ControllerActivation.Callback, activation);
        }
    }

    /// <summary>The loop runs an activation: runs the controller's oldest item, if the activation is still the current one.</summary>
    internal void RunActivation(ControllerActivation activation)
    {
        WorkItem item;
        bool more;
        int level;
        lock (_lock)
        {
            if (!ReferenceEquals(activation, _current))
            {
                return; // stale: SetLevel or Close replaced it; the current one (if any) serves the queue
            }

            bool taken = _queue.TryDequeue(out item);
            Debug.Assert(taken, "[C-CONTROLLER]: the current activation is pending only while items are queued");
            more = _queue.Count != 0;
            if (!more)
            {
                _pending = false;
            }

            level = _activeLevel;
        }

        if (more)
        {
            // Re-queued before the item runs, so the next item comes after what the item posts at this level, as a plain post would.
            Context.Enqueue(level, ControllerActivation.Callback, activation); // loop thread: cannot be dropped
        }

        // The loop set the level's context; the controller's own makes awaits in the item come back through the controller.
        System.Threading.SynchronizationContext.SetSynchronizationContext(_syncContext);
        item.Invoke();
    }

    /// <summary>Closes the controller: by <see cref="Cancel"/> (<paramref name="expected"/> null), or because the context dropped the
    /// current activation <paramref name="expected"/> (the loop finished). Drops every queued item.</summary>
    internal void Close(DropReason reason, ControllerActivation? expected)
    {
        Queue<WorkItem> dropped;
        int level;
        int release = 0;
        lock (_lock)
        {
            if (_closed || (expected is not null && !ReferenceEquals(expected, _current)))
            {
                return; // closed already, or a stale activation was dropped (the current one covers the queue)
            }

            _closed = true;
            _closeReason = reason;
            _current = null; // every queued activation is stale from now on
            _pending = false;
            dropped = _queue;
            _queue = new Queue<WorkItem>(0);
            level = _level;
            if (reason == DropReason.Cancelled)
            {
                release = _operations; // every outstanding operation holds the context while open ([C-CONTROLLER])
            }
        }

        ExceptionDispatchInfo? firstFailure = null;
        while (dropped.TryDequeue(out WorkItem item))
        {
            firstFailure ??= DropOne(level, item, reason);
        }

        for (int i = 0; i < release; i++)
        {
            Context.OperationCompleted();
        }

        if (reason == DropReason.Cancelled)
        {
            try
            {
                _cancellation.Cancel();
            }
            catch (Exception ex)
            {
                firstFailure ??= ExceptionDispatchInfo.Capture(ex);
            }
        }

        firstFailure?.Throw();
    }

    private ExceptionDispatchInfo? DropOne(int level, in WorkItem item, DropReason reason)
    {
        try
        {
            if (item.Callback == IControllerRun.Callback)
            {
                ((IControllerRun)item.State!).Abandon(reason);
            }

            Context.DropItem(level, item, reason);
            return null;
        }
        catch (Exception ex)
        {
            return ExceptionDispatchInfo.Capture(ex);
        }
    }

    // ---- Holds ------------------------------------------------------------------------------------------------------------

    internal void OperationStarted()
    {
        lock (_lock)
        {
            _operations++;
            if (!_closed || _closeReason != DropReason.Cancelled)
            {
                Context.OperationStarted(); // under the lock, so Cancel's release count matches the holds taken (an interlocked add)
            }
        }
    }

    internal void OperationCompleted()
    {
        bool release;
        lock (_lock)
        {
            if (_operations <= 0)
            {
                throw new InvalidOperationException(
                    $"OperationCompleted was called on the controller's context ({this}) with no operation outstanding: each " +
                    "OperationCompleted must match an earlier OperationStarted.");
            }

            _operations--;
            release = !_closed || _closeReason != DropReason.Cancelled;
        }

        if (release)
        {
            Context.OperationCompleted();
        }
    }

    internal bool IsOnLoopThreadAndMayInline(int level) => !IsCancelled && Context.CanRunInlineAt(level);

    internal WorkItem[] SnapshotQueue()
    {
        lock (_lock)
        {
            return _queue.ToArray();
        }
    }
}
