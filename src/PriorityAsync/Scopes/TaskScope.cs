using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A scope that owns the tasks started in it (Trio's nursery, Python's <c>asyncio.TaskGroup</c>, Kotlin's <c>coroutineScope</c>): the
/// scope completes only when every child has; the first child that fails cancels the others and the scope rethrows its exception once
/// they have finished; leaving the scope early (its body throws or is cancelled) cancels the children and waits for them. So work that
/// <c>_ = SomethingAsync()</c> would leave running unowned cannot outlive, or fail unseen by, the work that started it.
/// </summary>
/// <remarks>
/// <para>Open one with <see cref="RunAsync(Func{TaskScope, Task}, CancellationToken)"/> on a priority scheduler, and start children with
/// <see cref="Start(Func{CancellationToken, Task}, int)"/> (the scope owns them; nothing to await) or
/// <see cref="StartAsync(Func{CancellationToken, Task}, int)"/> (the same, plus the child's own task). Every scheduler also has a root
/// scope, <see cref="PriorityScheduler.Scope"/> (and <see cref="Priority.Start(Func{CancellationToken, Task})"/> as its shortcut), whose
/// lifetime is the scheduler's: <see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/> returns, and
/// <see cref="PriorityScheduler.Completion"/> completes, only when its children are done, and surface their failures.</para>
/// <para>A child starts as a queued item at its level (FIFO behind what is queued there, like
/// <see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>), runs on the scheduler in the <see cref="ExecutionContext"/> of the code
/// that started it, and its awaits resume at that level. It receives <see cref="CancellationToken"/>, which is cancelled by
/// <see cref="Cancel"/>, by the first failure in the scope, by the end of the body with an exception or a cancellation, by the token
/// passed to <see cref="RunAsync(Func{TaskScope, Task}, CancellationToken)"/>, and (root scope) by a fault of the scheduler. A child
/// that ends cancelled is not a failure.</para>
/// <para>Failures: the scope's task (and <c>Run</c>, for the root scope) ends with the first exception, in the order they happened (the
/// body's among them); every other one stays reachable in <see cref="Task.Exception"/>, as for <see cref="Task.WhenAll(Task[])"/>. Each
/// child fault is also reported, with the method's name, on the <c>PriorityAsync</c> meter (<c>priorityasync.work.faulted</c>) and event
/// source, whoever awaits it.</para>
/// <para>Thread safety: <see cref="Start(Func{CancellationToken, Task}, int)"/> must be called on a thread of the scope's scheduler
/// (children belong to it; from another thread, hand work over with <see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>).
/// <see cref="Cancel"/> and <see cref="CancellationToken"/> may be used from any thread. A child may end on any thread (after
/// <c>ConfigureAwait(false)</c>): the scope's bookkeeping takes a lock of its own ([K-SCOPE]).</para>
/// </remarks>
public sealed class TaskScope : IPendingOperation
{
    // [K-SCOPE]: _running, _bodyEnded, _completed and _failures under _lock; no user code runs under it.

    private readonly Lock _lock = new();
    private readonly CancellationTokenSource _cancellation = new();
    private readonly ScopeCompletion? _completion; // null: the root scope of a scheduler
    private readonly IEscalationNode? _owner; // what the body runs in: its children are raised with it ([X-PARENT]); null: none, or the root scope
    private CancellationTokenRegistration _outer;
    private List<Exception>? _failures;
    private int _running;
    private bool _bodyEnded;
    private bool _bodyCanceled;
    private CancellationToken _bodyCancellationToken;
    private bool _completed;
    private Exception[]? _rootFailures;

    // RunAsync's body once it waited (never cleared: the end's sweep may read it while the body's own end runs), and 1 once its end
    // was taken: by the body itself, or by the scheduler's end ([E-END], step 3).
    private Task? _waitingBody;
    private int _bodyEndTaken;

    private TaskScope(PriorityScheduler scheduler, ScopeCompletion? completion, IEscalationNode? owner, CancellationToken outer)
    {
        Scheduler = scheduler;
        _completion = completion;
        _owner = owner;
        if (outer.CanBeCanceled)
        {
            _outer = outer.UnsafeRegister(static state => ((TaskScope)state!).CancelChildren(rethrowWhenCompleted: false), this);
        }
    }

    /// <summary>Gets the scheduler the scope's children run on.</summary>
    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets the token every child receives: cancelled by <see cref="Cancel"/>, by the first failure in the scope, by the body
    /// ending with an exception or a cancellation, and by the token the scope was opened with.</summary>
    public CancellationToken CancellationToken => _cancellation.Token;

    /// <summary>Gets the number of children started and not ended yet (a moment's snapshot).</summary>
    public int RunningCount
    {
        get
        {
            lock (_lock)
            {
                return _running;
            }
        }
    }

    /// <summary>Gets whether the scope has completed: its body and every child have ended (for the root scope: its scheduler has ended).
    /// No child can be started any more.</summary>
    public bool IsCompleted
    {
        get
        {
            lock (_lock)
            {
                return _completed;
            }
        }
    }

    /// <summary>
    /// Runs <paramref name="body"/> in a new scope on the current priority scheduler, and completes when the body and every child it
    /// started have ended: with the first failure (the others in <see cref="Task.Exception"/>), else cancelled if the body was
    /// cancelled, else successfully.
    /// </summary>
    /// <param name="body">The scope's body; it starts at once, on the calling thread, and receives the scope.</param>
    /// <param name="cancellationToken">Cancels the scope's children (<see cref="CancellationToken"/> is linked to it).</param>
    /// <returns>A task that completes when the scope has.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The caller is not running on a thread of a priority scheduler.</exception>
    public static Task RunAsync(Func<TaskScope, Task> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        var completion = new ScopeCompletion<object?>();
        RunBody(body, completion, cancellationToken);
        return completion.Task;
    }

    /// <summary>
    /// Runs <paramref name="body"/> in a new scope on the current priority scheduler, and completes with the body's result when the body
    /// and every child it started have ended successfully; see <see cref="RunAsync(Func{TaskScope, Task}, CancellationToken)"/>.
    /// </summary>
    /// <typeparam name="TResult">The body's result type.</typeparam>
    /// <param name="body">The scope's body; it starts at once, on the calling thread, and receives the scope.</param>
    /// <param name="cancellationToken">Cancels the scope's children (<see cref="CancellationToken"/> is linked to it).</param>
    /// <returns>A task that completes with the body's result when the scope has completed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="body"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The caller is not running on a thread of a priority scheduler.</exception>
    public static Task<TResult> RunAsync<TResult>(Func<TaskScope, Task<TResult>> body, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(body);
        var completion = new ScopeCompletion<TResult>();
        RunBody(body, completion, cancellationToken);
        return completion.Task;
    }

    /// <summary>Starts <paramref name="child"/> in this scope at the caller's level; the scope owns it (see
    /// <see cref="Start(Func{CancellationToken, Task}, int)"/>).</summary>
    /// <param name="child">The child; it receives <see cref="CancellationToken"/>.</param>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">Not called on a thread of <see cref="Scheduler"/>, or the scope has completed.</exception>
    public void Start(Func<CancellationToken, Task> child) => Start(child, CallerLevel(nameof(Start)));

    /// <summary>Starts <paramref name="child"/> in this scope at <paramref name="level"/>, and gives nothing back: the scope owns it. It is
    /// queued at the back of that level, runs on the scheduler in the caller's <see cref="ExecutionContext"/>, and its awaits resume at that
    /// level; its failure fails the scope. To await one child's own outcome, use <see cref="StartAsync(Func{CancellationToken, Task}, int)"/>.</summary>
    /// <param name="child">The child; it receives <see cref="CancellationToken"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    /// <exception cref="InvalidOperationException">Not called on a thread of <see cref="Scheduler"/>, or the scope has completed.</exception>
    public void Start(Func<CancellationToken, Task> child, int level) => _ = StartAsync(child, level);

    /// <summary>Starts <paramref name="child"/> in this scope at the caller's level and returns its task; see
    /// <see cref="StartAsync(Func{CancellationToken, Task}, int)"/>.</summary>
    /// <param name="child">The child; it receives <see cref="CancellationToken"/>.</param>
    /// <returns>The child's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">Not called on a thread of <see cref="Scheduler"/>, or the scope has completed.</exception>
    public PriorityTask StartAsync(Func<CancellationToken, Task> child) => StartAsync(child, CallerLevel(nameof(StartAsync)));

    /// <summary>Starts <paramref name="child"/> in this scope at <paramref name="level"/> (as <see cref="Start(Func{CancellationToken, Task}, int)"/>)
    /// and returns its task, for a caller that awaits this child's own outcome. The scope owns the child all the same: its failure
    /// also fails the scope, so not awaiting the task loses nothing.</summary>
    /// <param name="child">The child; it receives <see cref="CancellationToken"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The child's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    /// <exception cref="InvalidOperationException">Not called on a thread of <see cref="Scheduler"/>, or the scope has completed.</exception>
    public PriorityTask StartAsync(Func<CancellationToken, Task> child, int level)
    {
        ArgumentNullException.ThrowIfNull(child);
        var operation = new ChildOperation<object?>(this, NewChildFlow(level), child, hasResult: false);
        StartCore(operation, operation.Flow);
        return new PriorityTask(operation.Task);
    }

    /// <summary>Starts <paramref name="child"/> in this scope at the caller's level and returns its result; see
    /// <see cref="StartAsync{TResult}(Func{CancellationToken, Task{TResult}}, int)"/>.</summary>
    /// <typeparam name="TResult">The child's result type.</typeparam>
    /// <param name="child">The child; it receives <see cref="CancellationToken"/>.</param>
    /// <returns>The child's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">Not called on a thread of <see cref="Scheduler"/>, or the scope has completed.</exception>
    public PriorityTask<TResult> StartAsync<TResult>(Func<CancellationToken, Task<TResult>> child) => StartAsync(child, CallerLevel(nameof(StartAsync)));

    /// <summary>Starts <paramref name="child"/> in this scope at <paramref name="level"/> and returns its result; the scope owns it as
    /// any other child (see <see cref="StartAsync(Func{CancellationToken, Task}, int)"/>).</summary>
    /// <typeparam name="TResult">The child's result type.</typeparam>
    /// <param name="child">The child; it receives <see cref="CancellationToken"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The child's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="child"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    /// <exception cref="InvalidOperationException">Not called on a thread of <see cref="Scheduler"/>, or the scope has completed.</exception>
    public PriorityTask<TResult> StartAsync<TResult>(Func<CancellationToken, Task<TResult>> child, int level)
    {
        ArgumentNullException.ThrowIfNull(child);
        var operation = new ChildOperation<TResult>(this, NewChildFlow(level), child, hasResult: true);
        StartCore(operation, operation.Flow);
        return new PriorityTask<TResult>(operation.Task);
    }

    /// <summary>Cancels <see cref="CancellationToken"/>: every child is asked to stop (for example a lease keeper, once the work it
    /// keeps alive is done). The scope still waits for them. Any thread; does nothing once the scope has completed.</summary>
    /// <remarks>An exception thrown by a callback registered on the token becomes a failure of the scope (it surfaces where the scope's
    /// failures do) instead of escaping from here.</remarks>
    public void Cancel()
    {
        lock (_lock)
        {
            if (_completed)
            {
                return;
            }
        }

        CancelChildren(rethrowWhenCompleted: true);
    }

    /// <summary>Describes the scope.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString()
    {
        lock (_lock)
        {
            string kind = _completion is null ? "root scope" : "scope";
            return $"{Scheduler.Name} {kind}: {_running} running{(_completed ? ", completed" : string.Empty)}{(_cancellation.IsCancellationRequested ? ", cancelled" : string.Empty)}";
        }
    }

    // ---- The root scope (PriorityScheduler.Scope) -----------------------------------------------------------------------------

    internal static TaskScope CreateRoot(PriorityScheduler scheduler) => new(scheduler, completion: null, owner: null, outer: default);

    /// <summary>Root scope: the owner's body (Run's entry, a hosted worker's ExecuteAsync) ended; a fault or a cancellation of it
    /// cancels the children (leaving the scope early). Any thread.</summary>
    internal void OnRootBodyEnded(Task body)
    {
        if (body.IsCompletedSuccessfully)
        {
            return;
        }

        if (body.Exception is { } fault)
        {
            lock (_lock)
            {
                (_failures ??= []).AddRange(fault.InnerExceptions);
            }
        }

        CancelChildren(rethrowWhenCompleted: false);
    }

    /// <summary>Root scope, once its scheduler has ended (every child ended before: each held it): no more children; the failures in
    /// the order they happened, or null, kept for <see cref="RootFailures"/>.</summary>
    internal Exception[]? CompleteRoot()
    {
        lock (_lock)
        {
            _completed = true;
            _rootFailures = _failures is { Count: > 0 } failures ? failures.ToArray() : null; // a copy: a child that outlives a fault may still add
            return _rootFailures;
        }
    }

    /// <summary>Root scope: the failures <see cref="CompleteRoot"/> found (null: none, or not ended yet).</summary>
    internal Exception[]? RootFailures => Volatile.Read(ref _rootFailures);

    /// <summary>Root scope: the scheduler faulted ([F-FAULT]): the children are asked to stop. What the token's callbacks throw is
    /// returned for the scheduler's outcome instead of escaping into the faulting thread.</summary>
    internal Exception[]? CancelOnFault()
    {
        try
        {
            _cancellation.Cancel();
        }
        catch (AggregateException ex)
        {
            return [.. ex.InnerExceptions];
        }

        return null;
    }

    // ---- Children ----------------------------------------------------------------------------------------------------------

    private WorkFlow NewChildFlow(int level) => new(Scheduler, Scheduler.ValidateLevel(level), "TaskScope child");

    private void StartCore(IInvokeOperation operation, WorkFlow flow)
    {
        if (!Scheduler.IsOnOwnThread)
        {
            throw new InvalidOperationException(
                $"TaskScope.Start was called on thread {Environment.CurrentManagedThreadId}, which does not run {Scheduler.Subject}. " +
                "Children belong to the scheduler: start them from code running on it, or hand the work over with InvokeAsync(...). " +
                "The child was not started.");
        }

        lock (_lock)
        {
            if (_completed)
            {
                throw new InvalidOperationException(
                    $"This {(_completion is null ? "root scope" : "scope")} of {Scheduler.Subject} has completed: its body and every child " +
                    "have ended, so nothing would wait for a new child. Start it in a scope that is still open. The child was not started.");
            }

            _running++; // [K-SCOPE]: counted before the hold is taken
        }

        Scheduler.OperationStarted(); // [K-SCOPE]: released by the child's end, after the scope counted it
        if (_owner is not null)
        {
            var batch = default(EscalationBatch);
            EscalationGraph.Attach(flow, _owner, ref batch); // before its first item is queued, so a raised owner raises it from the start ([X-PARENT])
            batch.Run();
        }

        flow.QueueItem(new WorkItem(IInvokeOperation.RunCallback, operation, ExecutionContextFlow.Capture()));
    }

    /// <summary>A child ended (any thread); <paramref name="child"/> has completed. Then releases the child's hold ([K-SCOPE]).</summary>
    internal void OnChildEnded(Task child, WorkFlow flow)
    {
        try
        {
            if (_owner is not null)
            {
                var batch = default(EscalationBatch);
                EscalationGraph.Detach(flow, _owner, ref batch); // its owner's raise no longer reaches it ([X-PARENT])
                batch.Run();
            }

            bool firstFailure = false;
            lock (_lock)
            {
                if (child.Exception is { } fault)
                {
                    firstFailure = _failures is null;
                    (_failures ??= []).AddRange(fault.InnerExceptions);
                }

                _running--;
            }

            if (firstFailure)
            {
                CancelChildren(rethrowWhenCompleted: false); // before completing, so a token callback's exception is one more failure
            }

            CompleteIfDone();
        }
        finally
        {
            Scheduler.OperationCompleted(); // [K-SCOPE]: after the scope counted the end, whatever happened
        }
    }

    /// <summary>Cancels the children from inside the scope's protocol: an exception of a token callback becomes a failure of the scope
    /// rather than escaping into whatever ended (a child, the body, an outer token's Cancel).</summary>
    private void CancelChildren(bool rethrowWhenCompleted)
    {
        try
        {
            _cancellation.Cancel();
        }
        catch (AggregateException ex)
        {
            lock (_lock)
            {
                if (!_completed)
                {
                    (_failures ??= []).AddRange(ex.InnerExceptions);
                    return;
                }
            }

            // Too late to fail the scope. A caller of Cancel gets the exception, as from CancellationTokenSource.Cancel; inside the
            // protocol nobody is there to get it, so it is reported (never silent) rather than thrown into a child's end.
            if (rethrowWhenCompleted)
            {
                throw;
            }

            WorkFaults.Report(Scheduler.Name, 0, "TaskScope.Cancel", "CancellationToken callback", ex.InnerExceptions);
        }
    }

    private int CallerLevel(string operation) =>
        SynchronizationContext.Current is PrioritySynchronizationContext current && current.Scheduler == Scheduler
            ? current.Level
            : throw new InvalidOperationException(
                $"TaskScope.{operation} without a level starts the child at the caller's level, and the caller is not running on " +
                $"{Scheduler.Subject}. Pass the level, or start the child from code running on it.");

    // ---- The body (RunAsync) -----------------------------------------------------------------------------------------------

    private static void RunBody(Delegate body, ScopeCompletion completion, CancellationToken cancellationToken)
    {
        PriorityScheduler scheduler = Priority.CurrentScheduler ?? throw new InvalidOperationException(
            $"TaskScope.RunAsync can only be used by code running on a PriorityContext or a PriorityThreadPool, and the calling code runs " +
            $"on neither ({Priority.DescribeCurrentSynchronizationContext()}). Hop onto one first with await scheduler.Prioritize(level).");
        if (!scheduler.IsOnOwnThread)
        {
            throw new InvalidOperationException(
                $"TaskScope.RunAsync was called on thread {Environment.CurrentManagedThreadId}, which does not run {scheduler.Subject} (its " +
                "SynchronizationContext is current here, but its threads are elsewhere). Hop onto it first with await scheduler.Prioritize(level).");
        }

        // The body runs in the caller's flow (or controller): the scope's children are raised with it ([X-PARENT]).
        var scope = new TaskScope(scheduler, completion, ((PrioritySynchronizationContext)SynchronizationContext.Current!).Node, cancellationToken);
        Task? task;
        try
        {
            task = completion.StartBody(body, scope);
        }
        catch (Exception ex)
        {
            task = Task.FromException(ex);
        }

        task ??= Task.FromException(new InvalidOperationException($"The body passed to TaskScope.RunAsync ({scheduler.Subject}) returned null instead of a Task."));
        if (task.IsCompleted)
        {
            scope.OnBodyEnded(task);
        }
        else
        {
            scope._waitingBody = task;
            scheduler.TrackPending(scope); // an end that drops the body's continuation ends the body ([E-END], step 3)

            // Inline where the body ends (the scheduler's thread, usually), as a child's end: not through the thread pool.
            _ = task.ContinueWith(
                static (body, state) =>
                {
                    var scope = (TaskScope)state!;
                    scope.Scheduler.UntrackPending(scope);
                    scope.OnBodyEnded(body);
                },
                scope,
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }
    }

    /// <summary>[E-END], step 3: the scheduler ended while the body waited; its continuation was dropped, or will be when it comes. The
    /// body ends with <see cref="ObjectDisposedException"/> (one more failure of the scope, which cancels the children), unless it has
    /// ended already and only its continuation, queued to the thread pool, has not run yet.</summary>
    void IPendingOperation.AbandonAtEnd()
    {
        Task body = _waitingBody!;
        OnBodyEnded(body.IsCompleted ? body : Task.FromException(new ObjectDisposedException(
            Scheduler.Name,
            $"{Scheduler.SubjectAtStart} ended ({Scheduler.State}) while the body of a TaskScope was waiting to resume, and dropped what " +
            "the body had queued: the rest of the body did not run.")));
    }

    /// <summary>The body ended (any thread): a failure or a cancellation cancels the children (leaving the scope early).</summary>
    private void OnBodyEnded(Task body)
    {
        if (Interlocked.Exchange(ref _bodyEndTaken, 1) != 0)
        {
            return; // the scheduler's end took it first (or the body's own end did, and this is the end's sweep)
        }

        _completion!.SetBody(body); // before _bodyEnded is published: whoever completes the scope reads the body's result
        lock (_lock)
        {
            if (body.Exception is { } fault)
            {
                (_failures ??= []).AddRange(fault.InnerExceptions);
            }
            else if (body.IsCanceled)
            {
                _bodyCanceled = true;
                _bodyCancellationToken = CanceledToken(body);
            }

            _bodyEnded = true;
        }

        if (!body.IsCompletedSuccessfully)
        {
            CancelChildren(rethrowWhenCompleted: false); // leaving the scope early; before completing, as in OnChildEnded
        }

        CompleteIfDone();
    }

    /// <summary>Completes the scope if its body and every child have ended and nobody completed it yet ([K-SCOPE]). Any thread.</summary>
    private void CompleteIfDone()
    {
        List<Exception>? failures;
        lock (_lock)
        {
            if (_completed || _completion is null || !_bodyEnded || _running != 0)
            {
                return;
            }

            _completed = true;
            failures = _failures;
        }

        // Outside the lock, though nothing here runs user code: the scope's task runs its continuations asynchronously, and Unregister
        // never waits for a running callback.
        _outer.Unregister();
        if (failures is not null)
        {
            _completion!.Fail(failures);
        }
        else if (_bodyCanceled)
        {
            _completion!.Cancel(_bodyCancellationToken);
        }
        else
        {
            _completion!.Succeed();
        }
    }

    private static CancellationToken CanceledToken(Task task)
    {
        try
        {
            task.GetAwaiter().GetResult();
        }
        catch (OperationCanceledException ex)
        {
            return ex.CancellationToken;
        }

        return default;
    }

    /// <summary>Rethrows the first failure of a finished root scope, as is (the owner's Run).</summary>
    internal static void ThrowFirst(IReadOnlyList<Exception>? failures)
    {
        if (failures is { Count: > 0 })
        {
            ExceptionDispatchInfo.Throw(failures[0]);
        }
    }
}
