using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A priority scheduler with N dedicated threads sharing the level queues: at every dequeue, on any of its threads, the oldest item of
/// the highest level that may run is taken (or the policy's choice). The multi-threaded sibling of <see cref="PriorityContext"/>:
/// the same levels, policies, timers, <see cref="Priority"/> API and diagnostics, on several cores.
/// </summary>
/// <remarks>
/// <para>Thread safety: every member may be called from any thread. Up to <see cref="ThreadCount"/> callbacks run at once, so the code
/// you run here must be thread-safe (on a <see cref="PriorityContext"/> it need not be).</para>
/// <para>Ordering: strict priority holds at each dequeue (no thread takes an item while an item of a higher level it may run waits);
/// within a level, items are dequeued in the order they were queued (for one producer, in its program order). Items dequeued one after
/// the other may still run at the same time on two threads, so "dequeued first" is not "finished first".</para>
/// <para>The pool runs from its creation until <see cref="Complete"/> or disposal and all work it queued are done.</para>
/// </remarks>
public sealed partial class PriorityThreadPool : IPriorityScheduler, IAsyncDisposable, IDisposable
{
    /// <summary>Creates the pool and starts its threads.</summary>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is outside its allowed range.</exception>
    /// <exception cref="OutOfMemoryException">The operating system refused to start one of the threads (a process or container
    /// thread limit). The threads already started end, and nothing of the pool is left running or observed.</exception>
    public PriorityThreadPool(PriorityThreadPoolOptions? options = null)
    {
        options ??= new PriorityThreadPoolOptions();
        options.Validate();
        Name = options.Name ?? nameof(PriorityThreadPool);
        Levels = options.Levels;
        DefaultLevel = options.DefaultLevel;
        ThreadCount = options.ThreadCount;
        Policy = options.Policy;
        _idleSpinCount = options.IdleSpinCount;
        _queues = new LevelQueues(Levels);
        _running = new int[Levels];
        _maxConcurrency = new int[Levels];
        for (int level = 0; level < Levels; level++)
        {
            _maxConcurrency[level] = options.MaxConcurrencyPerLevel?[level] ?? ThreadCount;
            _capped |= _maxConcurrency[level] < ThreadCount;
        }

        InitializePolicy(options.Policy);
        UsePolicyClock(options.PolicyClock); // tests only (Policies/PriorityThreadPool.Policies.cs)
        _lockFree = !_capped && _policyKind == PolicyKind.Strict; // D-N in ThreadPool/PriorityThreadPool.Engine.cs
        SchedulerOperations.CreateLevelSurfaces(
            this,
            Levels,
            static (pool, level) => new PriorityThreadPoolSynchronizationContext(pool, level),
            static (pool, level) => new PriorityThreadPoolTaskScheduler(pool, level),
            out _syncContexts,
            out _schedulers,
            out _factories);

        _loopTimers = new LoopTimers(this, options.TimeProvider, "PriorityThreadPoolOptions.TimeProvider");
        _timeProvider = LoopTimeProvider.Create(_loopTimers, level: -1);
        _levelTimeProviders = new LoopTimeProvider?[Levels];
        TimeSlice = options.TimeSlice;
        _timeSliceTicks = TimeSliceOption.ToStopwatchTicks(options.TimeSlice);
        _timeSliceWatched = options.TimeSlice is not null && !options.TimeSliceDrivenByTests;
        ContextRegistry.Register(this); // the instruments report the pool until its last thread ends (OnLastThreadEnded)
        if (options.DequeueHooksForTests is { } hooks)
        {
            DequeueObserver = hooks.Observer;
            DequeueStarting = hooks.Starting;
        }

        StartThreads(options.StallTimeout, options.ThreadStartingForTests);
        StartSliceWatch();
    }

    /// <summary>Raised on the pool thread that ran the callback when an exception escapes it (typically an <c>async void</c> method).</summary>
    /// <remarks>Set <see cref="PriorityUnhandledExceptionEventArgs.Handled"/> to keep the pool running; otherwise the pool faults:
    /// it stops taking work, drops what is queued, and <see cref="Completion"/> faults with the exception.</remarks>
    public event EventHandler<PriorityUnhandledExceptionEventArgs>? UnhandledException;

    /// <summary>Raised for every callback the pool will never run, on the thread that found it (the poster, or a pool thread as the pool ends).</summary>
    public event EventHandler<WorkDroppedEventArgs>? WorkDropped;

    /// <summary>Raised on the watchdog thread when one of the pool's threads has stayed inside one item for
    /// <see cref="PriorityThreadPoolOptions.StallTimeout"/> while work waits; once per stall.</summary>
    public event EventHandler<StallDetectedEventArgs>? StallDetected;

    /// <summary>Gets the pool the calling code runs in, or <see langword="null"/>.</summary>
    public static PriorityThreadPool? Current => (SynchronizationContext.Current as PriorityThreadPoolSynchronizationContext)?.Pool;

    /// <inheritdoc/>
    public string Name { get; }

    /// <inheritdoc/>
    public int Levels { get; }

    /// <inheritdoc/>
    public int DefaultLevel { get; }

    /// <summary>Gets the number of threads.</summary>
    public int ThreadCount { get; }

    /// <summary>Gets <see cref="ThreadCount"/>.</summary>
    public int MaximumConcurrency => ThreadCount;

    /// <summary>Gets the policy, as given in <see cref="PriorityThreadPoolOptions.Policy"/>.</summary>
    public PriorityPolicy Policy { get; }

    /// <summary>Gets the state: <see cref="PriorityContextState.Running"/> from creation until the threads stopped.</summary>
    public PriorityContextState State => Volatile.Read(ref _state) switch
    {
        StateRunning => PriorityContextState.Running,
        StateCompleted => PriorityContextState.Completed,
        _ => PriorityContextState.Faulted,
    };

    /// <summary>Gets a task that completes when every thread has stopped. It faults with the exception that stopped the pool, if any
    /// (followed by what the callbacks registered on the root children's token threw when the fault cancelled it); else with the
    /// failures of the root children (<see cref="Priority.Start(Func{CancellationToken, Task})"/>, and what those callbacks threw when
    /// the token was cancelled), if any.</summary>
    public Task Completion => _completion.Task;

    /// <summary>Gets a <see cref="System.TimeProvider"/> whose timers fire on the pool at <see cref="DefaultLevel"/>.</summary>
    public TimeProvider TimeProvider => _timeProvider;

    /// <summary>Gets the most threads <paramref name="level"/> may use at once.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>From 1 to <see cref="ThreadCount"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public int GetMaxConcurrency(int level) => _maxConcurrency[ValidateLevel(level)];

    /// <summary>Gets the cached <see cref="SynchronizationContext"/> of <paramref name="level"/> (no thread affinity: any pool thread).</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public PriorityThreadPoolSynchronizationContext GetSynchronizationContext(int level) => _syncContexts[ValidateLevel(level)];

    /// <summary>Gets the cached <see cref="TaskScheduler"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public PriorityThreadPoolTaskScheduler GetScheduler(int level) => _schedulers[ValidateLevel(level)];

    /// <summary>Gets a cached <see cref="TaskFactory"/> whose tasks run at <paramref name="level"/>, its scheduler hidden inside them
    /// (as <see cref="PriorityContext.GetTaskFactory(int)"/>).</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public TaskFactory GetTaskFactory(int level) => _factories[ValidateLevel(level)];

    /// <summary>Gets a <see cref="System.TimeProvider"/> whose timers fire on the pool at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public TimeProvider GetTimeProvider(int level) => LoopTimeProvider.GetOrCreate(_levelTimeProviders, _loopTimers, ValidateLevel(level));

    /// <summary>Moves the rest of the calling method onto the pool at <paramref name="level"/>. On one of its threads it completes at once
    /// when nothing this thread may run waits above <paramref name="level"/> (and, if the level is capped, it has room); from any other
    /// thread it always hops onto the pool.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>An awaitable. Once the pool has faulted or finished, the <c>await</c> throws <see cref="ObjectDisposedException"/>, on any
    /// thread: the method never goes on at its old level as if it had moved.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public PriorityAwaitable Prioritize(int level) => new(this, ValidateLevel(level), alwaysQueue: false);

    /// <summary>Queues the rest of the calling method at the back of <paramref name="level"/>, always.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>An awaitable. Once the pool has faulted or finished, the <c>await</c> throws <see cref="ObjectDisposedException"/>, on any
    /// thread.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public PriorityAwaitable Yield(int level) => new(this, ValidateLevel(level), alwaysQueue: true);

    /// <summary>Queues <paramref name="work"/> at <see cref="DefaultLevel"/>; see <see cref="InvokeAsync(Func{Task}, int)"/>.</summary>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>The work's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    public Task InvokeAsync(Func<Task> work) => InvokeAsync(work, DefaultLevel);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/> and returns a task that completes as the task it returns does.</summary>
    /// <param name="work">The asynchronous work; it starts on a pool thread in the caller's <see cref="ExecutionContext"/>, and its awaits resume at <paramref name="level"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The work's own task, unwrapped; faulted with <see cref="ObjectDisposedException"/> if the pool finished before it could run.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    /// <remarks>The work counts as an outstanding operation until its task completes: <see cref="Complete"/> waits for it.</remarks>
    public Task InvokeAsync(Func<Task> work, int level)
    {
        ArgumentNullException.ThrowIfNull(work);
        ValidateLevel(level);
        var operation = new PoolInvokeOperation<object?>(this, level, work, hasResult: false);
        Enqueue(level, IInvokeOperation.RunCallback, operation, ExecutionContextFlow.Capture()); // the poster's context (E1)
        return operation.Task;
    }

    /// <summary>Queues <paramref name="work"/> at <see cref="DefaultLevel"/>; see <see cref="InvokeAsync(Func{Task}, int)"/>.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>The work's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    public Task<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work) => InvokeAsync(work, DefaultLevel);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/>; see <see cref="InvokeAsync(Func{Task}, int)"/>.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The work's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public Task<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work, int level)
    {
        ArgumentNullException.ThrowIfNull(work);
        ValidateLevel(level);
        var operation = new PoolInvokeOperation<TResult>(this, level, work, hasResult: true);
        Enqueue(level, IInvokeOperation.RunCallback, operation, ExecutionContextFlow.Capture());
        return operation.Task;
    }

    /// <summary>Gets the shares of <paramref name="level"/> under <see cref="PriorityPolicy.WeightedShares(int[])"/>.</summary>
    /// <param name="level">The level.</param>
    /// <returns>The shares.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    /// <exception cref="InvalidOperationException">The pool's policy is not weighted shares.</exception>
    public int GetShares(int level) => SharesPolicy(nameof(GetShares)).GetShares(ValidateLevel(level));

    /// <summary>Changes the shares of <paramref name="level"/> under <see cref="PriorityPolicy.WeightedShares(int[])"/>, from any thread.</summary>
    /// <param name="level">The level.</param>
    /// <param name="shares">The new shares, from 1 to 10,000.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> or <paramref name="shares"/> is out of range.</exception>
    /// <exception cref="InvalidOperationException">The pool's policy is not weighted shares.</exception>
    public void SetShares(int level, int shares)
    {
        WeightedSharesDispatch policy = SharesPolicy(nameof(SetShares));
        PriorityPolicy.CheckShares(shares, ValidateLevel(level), nameof(shares));
        policy.SetShares(level, shares);
    }

    /// <summary>Takes a moment's snapshot of the queues and counters (run counts summed over the threads).</summary>
    /// <returns>A new snapshot.</returns>
    public PriorityContextSnapshot GetSnapshot()
    {
        long[] run = new long[Levels];
        for (int level = 0; level < Levels; level++)
        {
            foreach (PoolWorker worker in _workers)
            {
                run[level] += worker.RunCount(level);
            }
        }

        return new(State, _queues, run, Interlocked.Read(ref _dropped), Volatile.Read(ref _outstanding));
    }

    /// <summary>Lets the pool stop once all queued work and all outstanding operations are done. Idempotent; never blocks.</summary>
    public void Complete()
    {
        if (Interlocked.Exchange(ref _completeRequested, 1) == 0)
        {
            OperationCompleted(); // the pool's own hold, taken when it was created
        }
    }

    /// <summary>Cancels the token given to the pool's root children (the work started on it with
    /// <see cref="Priority.Start(Func{CancellationToken, Task})"/>), as <c>Scope.Cancel()</c> does for a <see cref="PriorityContext"/>'s
    /// root scope. Idempotent; never blocks; from any thread, also after the pool ended.</summary>
    /// <remarks>The children still run to their end, and the pool waits for them before <see cref="Completion"/> completes; a child
    /// started after this call gets the cancelled token. A child's fault, and the pool's, cancel the same token by themselves.
    /// Call it before <see cref="Complete"/> when the children run until cancelled. An exception thrown by a callback registered on
    /// the token becomes one of the root failures (<see cref="Completion"/> faults with it, as a root scope's failures do on a
    /// <see cref="PriorityContext"/>) instead of escaping from here; only while the pool is completing <see cref="Completion"/>, too
    /// late for that, is it thrown here (an <see cref="AggregateException"/>, as from
    /// <see cref="CancellationTokenSource.Cancel()"/>).</remarks>
    public void CancelRootChildren()
    {
        if (CancelRootChildrenCore() is { } callbackFailures && !TryAddRootFailures(callbackFailures))
        {
            ExceptionDispatchInfo.Throw(callbackFailures); // too late to be a root failure: to the caller, as from Cancel
        }
    }

    /// <summary>Completes the pool and waits for its threads to stop (queued work runs first). Rethrows the fault that stopped it, if any.</summary>
    /// <returns>A task that completes when the threads have stopped.</returns>
    /// <remarks>Called from one of the pool's own threads it only completes, and returns a completed task: the pool cannot wait for
    /// itself. That holds whatever the thread runs: an item, or a handler the pool raises there, also as its last thread ends (a
    /// <see cref="WorkDropped"/> handler for what is left).</remarks>
    public ValueTask DisposeAsync()
    {
        Complete();
        return IsOwnThread() ? default : new ValueTask(Completion);
    }

    /// <summary>Completes the pool and blocks until its threads have stopped. Rethrows the fault that stopped it, if any.</summary>
    /// <remarks>Called from one of the pool's own threads it only completes, whatever the thread runs (an item, or a handler the pool
    /// raises there, also as its last thread ends): the pool cannot wait for itself.</remarks>
    public void Dispose()
    {
        Complete();
        if (!IsOwnThread())
        {
            Completion.GetAwaiter().GetResult();
        }
    }

    /// <summary>Describes the pool.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Name} ({ThreadCount} threads, {Levels} levels, {State})";

    SynchronizationContext IPriorityScheduler.GetSynchronizationContext(int level) => GetSynchronizationContext(level);

    TaskScheduler IPriorityScheduler.GetScheduler(int level) => GetScheduler(level);
}
