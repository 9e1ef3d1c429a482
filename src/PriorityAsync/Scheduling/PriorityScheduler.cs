using System;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A priority scheduler: work queues per level, the oldest item of the highest level that may run is taken next, and every level has
/// its own cached <see cref="PrioritySynchronizationContext"/>, so an <c>await</c> resumes at the level its method was running at.
/// The two kinds are <see cref="PriorityContext"/> (one loop thread: no two callbacks ever run at once) and
/// <see cref="PriorityThreadPool"/> (N threads sharing the levels); code that only hands work over takes this type and runs on either.
/// </summary>
/// <remarks>
/// <para>Thread safety: every member may be called from any thread.</para>
/// <para>Ordering: strict priority between levels (or the <see cref="Policy"/>'s choice), FIFO within a level (for items queued by one
/// thread, in that thread's program order).</para>
/// <para>Every queued item is either run exactly once or dropped exactly once: counted in
/// <see cref="PrioritySchedulerSnapshot.DroppedCount"/> and reported through <see cref="WorkDropped"/>. Nothing is lost silently.</para>
/// </remarks>
public abstract partial class PriorityScheduler
{
    internal static readonly SendOrPostCallback s_runAction = static state => ((Action)state!)();

    // Distinct from s_runAction by reference, so a dropped continuation of Prioritize, Yield or Checkpoint is recognised and resumed
    // elsewhere, where its GetResult throws ([D-DROP]).
    internal static readonly SendOrPostCallback s_runContinuation = static state => ((Action)state!)();

    private protected readonly LevelQueues _queues;
    private protected readonly SchedulerThread[] _threads;
    private protected readonly PrioritySynchronizationContext[] _syncContexts;
    private readonly PriorityTaskScheduler[] _taskSchedulers;
    private readonly TaskFactory[] _factories;
    private readonly bool _named;

    // Whether the scheduler is one loop (a PriorityContext), set by the kind: messages call its thread "the loop", the trace puts its
    // items on the scheduler's own track, and its description has no thread count.
    private readonly bool _isLoop;

    // Operations that keep the scheduler from ending ([L-LOOP] step 2, [E-POOL]); the first is the owner's hold ([E-LIFE]).
    private protected int _outstanding;
    private protected ExceptionDispatchInfo? _fault;
    private Exception[]? _faultCallbackFailures;
    private long _dropped;
    private long _wakeCount;

    /// <param name="options">The validated settings.</param>
    /// <param name="threadCount">How many threads consume the queues.</param>
    /// <param name="isLoop">Whether the kind is one loop (<see cref="PriorityContext"/>).</param>
    /// <param name="virtualClock">The options' clock when the kind advances it itself (a loop on a <see cref="VirtualTimeProvider"/>,
    /// [V-ADVANCE]): the stamps, policies and instruments then read it, and the time quota is off; else null.</param>
    private protected PriorityScheduler(PrioritySchedulerOptions options, int threadCount, bool isLoop, TimeProvider? virtualClock)
    {
        options.ThrowIfInvalid();
        Kind = GetType().Name;
        _named = options.Name is not null;
        Name = options.Name ?? Kind;
        Levels = options.Levels;
        DefaultLevel = options.DefaultLevel;
        _isLoop = isLoop;
        _outstanding = 1; // the owner's hold ([E-LIFE])
        _queues = new LevelQueues(Levels);
        _clock = options.Clock ?? virtualClock;
        _stallTimeout = options.StallTimeout;
        TimeSlice = options.TimeSlice;
        _timeSliceTicks = TimeSliceOption.ToStopwatchTicks(options.TimeSlice);
        _timeSliceWatched = options.TimeSlice is not null && !options.TimeSliceDrivenByTests && virtualClock is null;
        InitializePolicy(options.Policy, options.PolicyClock ?? _clock);

        _syncContexts = new PrioritySynchronizationContext[Levels];
        _taskSchedulers = new PriorityTaskScheduler[Levels];
        _factories = new TaskFactory[Levels];
        for (int level = 0; level < Levels; level++)
        {
            _syncContexts[level] = new PrioritySynchronizationContext(this, level);
            _taskSchedulers[level] = new PriorityTaskScheduler(this, level);

            // Hides its scheduler inside the tasks it starts, as AsyncEx and Task.Run do: the level travels with await, not with
            // TaskScheduler.Current.
            _factories[level] = new TaskFactory(
                CancellationToken.None, TaskCreationOptions.HideScheduler, TaskContinuationOptions.HideScheduler, _taskSchedulers[level]);
        }

        _threads = new SchedulerThread[threadCount];
        for (int i = 0; i < threadCount; i++)
        {
            _threads[i] = new SchedulerThread(this, i);
        }

        _loopTimers = new LoopTimers(this, options.TimeProvider, $"{options.GetType().Name}.TimeProvider");
        _timeProvider = LoopTimeProvider.Create(_loopTimers, level: -1);
        _levelTimeProviders = new LoopTimeProvider?[Levels];
        Scope = TaskScope.CreateRoot(this);
    }

    /// <summary>Raised when a callback escapes with an exception (typically from an <c>async void</c> method), on the thread that ran it.</summary>
    /// <remarks>Set <see cref="PriorityUnhandledExceptionEventArgs.Handled"/> to keep the scheduler running; otherwise it faults: it
    /// starts no more items, drops what is queued (<see cref="DropReason.AbandonedAfterFault"/>), cancels its root scope's children,
    /// and <see cref="Completion"/> faults with the exception.</remarks>
    public event EventHandler<PriorityUnhandledExceptionEventArgs>? UnhandledException;

    /// <summary>
    /// Raised for every callback the scheduler will never run: posted after it finished, or still queued when it faulted. Raised on the
    /// thread that found the callback (the poster, or a thread of the scheduler as it ends). Handlers must not throw; if one does, the
    /// remaining callbacks are still dropped and reported first, then the exception propagates to the poster (or surfaces in
    /// <see cref="Completion"/> unless the scheduler faulted).
    /// </summary>
    public event EventHandler<WorkDroppedEventArgs>? WorkDropped;

    /// <summary>Gets the name given in the options, or the kind (<c>PriorityContext</c>, <c>PriorityThreadPool</c>) when none was.</summary>
    public string Name { get; }

    /// <summary>Gets the number of levels; they are numbered 0 to <c>Levels - 1</c>, and a higher number runs first.</summary>
    public int Levels { get; }

    /// <summary>Gets the level an entry point, and <c>InvokeAsync</c> without a level, start at.</summary>
    public int DefaultLevel { get; }

    /// <summary>Gets how many callbacks may run at once: 1 for a <see cref="PriorityContext"/>, the thread count for a
    /// <see cref="PriorityThreadPool"/>.</summary>
    public int MaximumConcurrency => _threads.Length;

    /// <summary>Gets the state of the scheduler.</summary>
    public PrioritySchedulerState State => Volatile.Read(ref _state) switch
    {
        StateNotStarted => PrioritySchedulerState.NotStarted,
        StateRunning => PrioritySchedulerState.Running,
        StateCompleted => PrioritySchedulerState.Completed,
        _ => PrioritySchedulerState.Faulted,
    };

    /// <summary>Gets a task that completes when the scheduler has ended and dropped what was left. It faults with the exception that
    /// stopped the scheduler, if any (followed by what callbacks registered on the root scope's token threw when the fault cancelled
    /// it); else with the exception a <see cref="WorkDropped"/> handler threw as it ended, if any; else with every failure of the root
    /// scope's children (<see cref="Scope"/>), if any.</summary>
    public Task Completion => _completion.Task;

    /// <summary>
    /// Gets the root scope: children started in it (<see cref="TaskScope.Start(Func{CancellationToken, Task}, int)"/>, or
    /// <see cref="Priority.Start(Func{CancellationToken, Task})"/> for short) belong to the scheduler itself: it ends only when they
    /// are done, the first failure cancels the others and surfaces where the scheduler's outcome does (<c>PriorityContext.Run</c>,
    /// <see cref="Completion"/>), and a fault of the scheduler cancels them.
    /// </summary>
    /// <remarks>Run's entry is the root scope's body: if it throws or is cancelled, the children are cancelled. A hosted worker cancels
    /// them with its stopping token and waits for them. Otherwise nothing cancels them by itself: call <see cref="TaskScope.Cancel"/>
    /// to stop long-running children before completing a <see cref="PriorityContextThread"/> or a <see cref="PriorityThreadPool"/>.</remarks>
    public TaskScope Scope { get; }

    /// <summary>"PriorityContext" or "PriorityThreadPool", for messages and the metrics' kind tag.</summary>
    internal string Kind { get; }

    /// <summary>The scheduler as messages name it: "the PriorityContext 'worker'", or "the PriorityContext" when it has no name.</summary>
    internal string Subject => _named ? $"the {Kind} '{Name}'" : $"the {Kind}";

    /// <summary><see cref="Subject"/> at the start of a sentence.</summary>
    internal string SubjectAtStart => _named ? $"The {Kind} '{Name}'" : $"The {Kind}";

    internal LevelQueues Queues => _queues;

    internal SchedulerThread[] Threads => _threads;

    internal bool IsFinished => Volatile.Read(ref _state) >= StateCompleted;

    /// <summary>Whether the scheduler has faulted or finished: its awaitables no longer go on ([F-STOP]).</summary>
    internal bool HasStopped => Volatile.Read(ref _fault) is not null || IsFinished;

    internal ExceptionDispatchInfo? Fault => Volatile.Read(ref _fault);

    /// <summary>Whether the calling thread runs this scheduler's items (the loop's thread, or one of the pool's).</summary>
    internal bool IsOnOwnThread => SchedulerThread.Current?.Scheduler == this;

    /// <summary>For tests: how many times a producer had to wake a parked thread.</summary>
    internal long WakeCount => Interlocked.Read(ref _wakeCount);

    /// <summary>Gets the cached <see cref="SynchronizationContext"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public PrioritySynchronizationContext GetSynchronizationContext(int level) => _syncContexts[ValidateLevel(level)];

    /// <summary>The context of a level the caller has validated (the inline <c>Prioritize</c> path checks it once).</summary>
    internal PrioritySynchronizationContext LevelContext(int level) => _syncContexts[level];

    /// <summary>Gets the cached <see cref="TaskScheduler"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public PriorityTaskScheduler GetScheduler(int level) => _taskSchedulers[ValidateLevel(level)];

    /// <summary>Gets a cached <see cref="TaskFactory"/> whose tasks run at <paramref name="level"/>.</summary>
    /// <remarks>The factory hides its scheduler (<see cref="TaskCreationOptions.HideScheduler"/>,
    /// <see cref="TaskContinuationOptions.HideScheduler"/>), as Nito.AsyncEx's <c>AsyncContext.Factory</c> and <see cref="Task.Run(Action)"/>
    /// do: inside its tasks <see cref="TaskScheduler.Current"/> is <see cref="TaskScheduler.Default"/>, so a nested
    /// <c>Task.Factory.StartNew</c> or <c>ContinueWith</c> without a scheduler runs on the thread pool. An <c>await</c> in such a task
    /// still resumes at <paramref name="level"/> (the level travels with the <see cref="SynchronizationContext"/>); nested work that
    /// belongs on the scheduler asks for it with <see cref="GetTaskFactory(int)"/> or <see cref="GetScheduler(int)"/>.</remarks>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public TaskFactory GetTaskFactory(int level) => _factories[ValidateLevel(level)];

    /// <summary>
    /// Moves the rest of the calling method onto the scheduler at <paramref name="level"/>. On a thread of the scheduler it completes at
    /// once when nothing that thread may run waits above <paramref name="level"/> (on a pool, with caps, the level must also have
    /// room); from any other thread it always hops onto the scheduler. Later awaits in the method come back at that level.
    /// </summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>An awaitable. Once the scheduler has faulted or finished, the <c>await</c> throws <see cref="ObjectDisposedException"/>:
    /// the method never goes on at its old level as if it had moved.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public PriorityAwaitable Prioritize(int level)
    {
        level = ValidateLevel(level);
        return new(this, FlowAt(level), level, alwaysQueue: false);
    }

    /// <summary>Queues the rest of the calling method at the back of <paramref name="level"/>, always (it never completes at once).</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>An awaitable; once the scheduler has faulted or finished, the <c>await</c> throws <see cref="ObjectDisposedException"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public PriorityAwaitable Yield(int level)
    {
        level = ValidateLevel(level);
        return new(this, FlowAt(level), level, alwaysQueue: true);
    }

    /// <summary>Where the calling code goes on at <paramref name="level"/> of this scheduler: its own flow at that level when it runs in
    /// one here ([X-FLOW]), else null (the level's own context).</summary>
    private FlowContext? FlowAt(int level) =>
        SynchronizationContext.Current is PrioritySynchronizationContext current && current.Scheduler == this ? current.FlowAt(level) : null;

    /// <summary>Queues <paramref name="work"/> at <see cref="DefaultLevel"/>; see <see cref="InvokeAsync(Func{Task}, int)"/>.</summary>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>The work's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    public PriorityTask InvokeAsync(Func<Task> work) => InvokeAsync(work, DefaultLevel);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/> and returns a task that completes as the task it returns does
    /// (Nito.AsyncEx's <c>AsyncContext.Factory.Run</c>, WPF's <c>Dispatcher.InvokeAsync</c>).</summary>
    /// <param name="work">The asynchronous work; it starts on the scheduler in the caller's <see cref="ExecutionContext"/>, and its awaits
    /// resume at <paramref name="level"/>.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The work's own task, unwrapped: its exception, cancellation or completion; faulted with
    /// <see cref="ObjectDisposedException"/> if the scheduler finished before the work could run. Awaiting it from code at a higher level
    /// of this scheduler runs the work at that level until it completes ([X-JOIN]).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    /// <remarks>The work counts as an outstanding operation until its task completes: the scheduler does not end before it. Its code
    /// runs in a flow of its own, which a wait on it raises ([X-FLOW]).</remarks>
    public PriorityTask InvokeAsync(Func<Task> work, int level)
    {
        ArgumentNullException.ThrowIfNull(work);
        var operation = new InvokeOperation<object?>(new WorkFlow(this, ValidateLevel(level), "InvokeAsync"), work, hasResult: false);
        operation.Start();
        return new PriorityTask(operation.Task);
    }

    /// <summary>Queues <paramref name="work"/> at <see cref="DefaultLevel"/>; see <see cref="InvokeAsync(Func{Task}, int)"/>.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>The work's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    public PriorityTask<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work) => InvokeAsync(work, DefaultLevel);

    /// <summary>Queues <paramref name="work"/> at <paramref name="level"/>; see <see cref="InvokeAsync(Func{Task}, int)"/>.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="work">The asynchronous work.</param>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>The work's own task, unwrapped.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="work"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    public PriorityTask<TResult> InvokeAsync<TResult>(Func<Task<TResult>> work, int level)
    {
        ArgumentNullException.ThrowIfNull(work);
        var operation = new InvokeOperation<TResult>(new WorkFlow(this, ValidateLevel(level), "InvokeAsync"), work, hasResult: true);
        operation.Start();
        return new PriorityTask<TResult>(operation.Task);
    }

    /// <summary>Takes a moment's snapshot of the queues and counters (run counts summed over the threads), for diagnostics.</summary>
    /// <returns>A new snapshot.</returns>
    public PrioritySchedulerSnapshot GetSnapshot()
    {
        long[] run = new long[Levels];
        int[] pending = new int[Levels];
        for (int level = 0; level < Levels; level++)
        {
            run[level] = GetRun(level);
            pending[level] = _queues.Count(level);
        }

        return new(State, pending, run, Interlocked.Read(ref _dropped), Volatile.Read(ref _outstanding));
    }

    /// <summary>Describes the scheduler.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() =>
        _isLoop ? $"{Name} ({Levels} levels, {State})" : $"{Name} ({_threads.Length} threads, {Levels} levels, {State})";

    // ---- Queueing ([Q-MASK], [Q-CONSUMER], [E-RACE]) ------------------------------------------------------------------------

    /// <summary>Queues one item at <paramref name="level"/>, from any thread. <paramref name="executionContext"/> is the context the item
    /// runs in ([E-FLOW]): what a plain callback captured where it entered, or null (the default context) for everything that restores
    /// its own.</summary>
    internal void Enqueue(int level, SendOrPostCallback callback, object? state, ExecutionContext? executionContext = null)
    {
        long enqueuedAt = ((_slowPaths | _stampAlways) & SlowPaths.WaitTime) == 0 ? 0 : Timestamp();
        var item = new WorkItem(callback, state, executionContext, enqueuedAt);
        Thread? consumer = _consumer;
        if (consumer is not null && consumer == Thread.CurrentThread)
        {
            _queues.EnqueueFromConsumer(level, item); // the loop posts to itself: not parked, not finished ([Q-CONSUMER])
            return;
        }

        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            Drop(level, item, DropReasonNow());
            return;
        }

        _queues.Enqueue(level, item); // ends with a full fence ([Q-MASK])

        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            // The end was published while we enqueued; its last drain may have come before our item landed ([E-RACE]).
            DropRemaining()?.Throw();
            return;
        }

        WakeForWork();
    }

    /// <summary>Queues the continuation of an awaiting method (<c>Prioritize</c>, <c>Yield</c>, <c>Checkpoint</c>): from
    /// <c>OnCompleted</c> in the caller's <see cref="ExecutionContext"/>, from <c>UnsafeOnCompleted</c> in none ([E-FLOW]).</summary>
    internal void QueueContinuation(int level, Action continuation, bool flowExecutionContext)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        Enqueue(level, s_runContinuation, continuation, flowExecutionContext ? ExecutionContextFlow.Capture() : null);
    }

    /// <summary>Work was published with a full fence by a producer (an item, a timer's flag, the release of the last operation): wake
    /// a parked thread if one must see it ([P-LOOP], [P-POOL]).</summary>
    private protected abstract void WakeForWork();

    /// <summary>Counts a wake-up a producer had to make (slow path only).</summary>
    private protected void CountWake() => Interlocked.Increment(ref _wakeCount);

    internal void Send(PrioritySynchronizationContext target, SendOrPostCallback callback, object? state)
    {
        if (TrySendInline(target, callback, state))
        {
            return;
        }

        int level = target.Level;
        if (IsFinished)
        {
            throw new ObjectDisposedException(
                Name,
                $"{SubjectAtStart} has finished ({State}), so Send at level {level} cannot run; the callback did not run. Send needs a " +
                "running scheduler; Post is still accepted after the end (the callback is dropped and reported through WorkDropped).");
        }

        SendWaiter waiter = SendWaiter.Rent(callback, state);
        target.QueueItem(new WorkItem(SendWaiter.RunCallback, waiter, ExecutionContextFlow.Capture())); // the callback sees the sender's context
        waiter.WaitAndRethrow(this);
    }

    /// <summary>[S-INLINE]: on a thread of the scheduler, runs the callback at once in <paramref name="target"/> and returns true;
    /// elsewhere returns false (the caller queues it and blocks).</summary>
    private protected abstract bool TrySendInline(PrioritySynchronizationContext target, SendOrPostCallback callback, object? state);

    internal void OperationStarted() => Interlocked.Increment(ref _outstanding);

    internal void OperationCompleted()
    {
        // The compare-exchange in ReleaseOperation is the full fence the wake-up needs before it reads the parked flags.
        if (ReleaseOperation() == 1)
        {
            WakeForWork(); // a parked thread checks the end
        }
    }

    /// <summary>Releases one outstanding operation and returns the count before it: an unmatched call (OperationCompleted is public
    /// on the synchronization contexts) throws instead of pushing the count below zero, where "&lt;= 0" would read as "nothing
    /// outstanding" for good.</summary>
    private int ReleaseOperation()
    {
        int current = Volatile.Read(ref _outstanding);
        while (true)
        {
            if (current <= 0)
            {
                throw new InvalidOperationException(
                    $"OperationCompleted was called on {Subject} with no operation outstanding (count {current}): each " +
                    "OperationCompleted must match an earlier OperationStarted.");
            }

            int seen = Interlocked.CompareExchange(ref _outstanding, current - 1, current);
            if (seen == current)
            {
                return current;
            }

            current = seen;
        }
    }

    // ---- Inline decisions (each scheduler's own: the loop needs no lock, the pool has caps) ---------------------------------------

    /// <summary>The inline end of an <c>await Prioritize</c> (its <c>IsCompleted</c>): when the caller may go on at once at
    /// <paramref name="level"/>, in <paramref name="flow"/> (at its effective level, [X-FLOW]) or, when null, in the level's own context,
    /// makes that context current there and then ([A-INLINE]).</summary>
    internal abstract bool TryContinueInlineAt(int level, FlowContext? flow);

    /// <summary>The checkpoint decision at <paramref name="level"/>: whether the caller must queue the rest of its method ([SLICE-FLAG]).</summary>
    internal abstract bool ShouldYieldAt(int level);

    /// <summary>A task of <paramref name="level"/> inlined by <c>TaskScheduler.TryExecuteTaskInline</c> (a <c>Wait</c>): runs it and returns
    /// whether it ran, or returns false (the task stays queued). The wait is seen, so the task runs at the waiter's level when that is
    /// higher ([X-WAIT]).</summary>
    internal abstract bool TryRunTaskInline(int level, Func<Task, bool> tryExecuteTask, Task task);

    /// <summary>The level a task of <paramref name="level"/> runs at when the calling code waits for it: the caller's effective level on
    /// this scheduler if higher ([X-WAIT]).</summary>
    private protected int WaitedLevel(int level) =>
        SynchronizationContext.Current is PrioritySynchronizationContext waiter && waiter.Scheduler == this
            ? Math.Max(level, waiter.EffectiveLevel)
            : level;

    /// <summary>The most callbacks of <paramref name="level"/> that run at once (the task scheduler's MaximumConcurrencyLevel).</summary>
    internal virtual int GetMaxConcurrencyCore(int level) => _threads.Length;

    /// <summary>The end of an <c>await</c> of Prioritize or Yield: once the scheduler has faulted or finished, the method does not go on
    /// ([F-STOP]).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfResumedAfterFinish(int level)
    {
        if (HasStopped)
        {
            ThrowResumedAfterFinish(level);
        }
    }

    /// <summary>The end of an <c>await</c> of Checkpoint, as <see cref="ThrowIfResumedAfterFinish(int)"/>. The target's level is read
    /// only to throw: a controller's is a volatile read the resume need not pay.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void ThrowIfResumedAfterFinish(PrioritySynchronizationContext target)
    {
        if (target.Scheduler.HasStopped)
        {
            target.Scheduler.ThrowResumedAfterFinish(target.Level);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowResumedAfterFinish(int level) =>
        throw new ObjectDisposedException(
            Name,
            $"{SubjectAtStart} {(Volatile.Read(ref _fault) is not null ? "faulted" : "finished")} before the awaiting method could resume at level {level}.");

    // ---- Faults ([F-FAULT]) -------------------------------------------------------------------------------------------------------

    /// <summary>An exception escaped an item on this thread: the handlers decide; unless one marked it handled, the scheduler faults.</summary>
    /// <returns>Whether the scheduler goes on.</returns>
    private protected bool OnUnhandledException(Exception exception, int level)
    {
        var args = new PriorityUnhandledExceptionEventArgs(exception, level);
        ExceptionDispatchInfo? fault;
        try
        {
            UnhandledException?.Invoke(this, args);
            PriorityMetrics.RecordException(Name, level, exception, args.Handled);
            fault = args.Handled ? null : ExceptionDispatchInfo.Capture(exception);
        }
        catch (Exception handlerException)
        {
            PriorityMetrics.RecordException(Name, level, exception, handled: false);
            fault = ExceptionDispatchInfo.Capture(handlerException);
        }

        if (fault is null)
        {
            return true;
        }

        SetFault(fault);
        return false;
    }

    /// <summary>The first fault wins; it cancels the root scope's children (what their token's callbacks throw is kept for
    /// <see cref="Completion"/>, never thrown into the faulting thread) and tells the threads ([F-FAULT]).</summary>
    private protected void SetFault(ExceptionDispatchInfo fault)
    {
        if (Interlocked.CompareExchange(ref _fault, fault, null) is null)
        {
            try
            {
                _faultCallbackFailures = Scope.CancelOnFault();
            }
            finally
            {
                OnFaulted();
            }
        }
    }

    /// <summary>After the fault was published: the pool wakes its parked threads; the loop, which faulted on its own thread, has
    /// nothing to do.</summary>
    private protected virtual void OnFaulted()
    {
    }

    // ---- Dropping ([D-DROP]) ------------------------------------------------------------------------------------------------------

    private protected DropReason DropReasonNow() =>
        Volatile.Read(ref _state) == StateFaulted ? DropReason.AbandonedAfterFault : DropReason.PostedAfterCompletion;

    /// <summary>After the end: takes every remaining item, highest level first, and drops it. Any thread.</summary>
    /// <returns>The first exception a <see cref="WorkDropped"/> handler threw, for the caller to rethrow after every item was
    /// dropped (a blocked Send behind it must not wait forever), or null.</returns>
    private protected ExceptionDispatchInfo? DropRemaining() => _queues.DrainAll(this, DropReasonNow());

    /// <summary>Counts and reports one item the scheduler will never run; a flow's place hands the drop to its flow (a loop first hands a
    /// controller's activation to its controller).</summary>
    internal virtual void Drop(int level, in WorkItem item, DropReason reason)
    {
        if (item.Callback == FlowContext.RunNextCallback)
        {
            ((FlowContext)item.State!).DropNext(level, reason); // the flow's oldest item in its stead; a moved place drops nothing ([X-MOVE])
            return;
        }

        DropItem(level, item, reason);
    }

    /// <summary>Counts, releases and reports one item of user work (also a controller's own queued items).</summary>
    internal void DropItem(int level, in WorkItem item, DropReason reason)
    {
        CountDrop(level, reason, item.Callback, item.State);
        DroppedWork.Release(item); // a blocked Send, an awaiting method, an InvokeAsync task, a pending delay: none hangs
        WorkDropped?.Invoke(this, new WorkDroppedEventArgs(level, item.Callback, item.State, reason));
    }

    /// <summary>Counts one dropped item and reports it, with the code it would have run, on the meter and the event source.</summary>
    private protected void CountDrop(int level, DropReason reason, SendOrPostCallback callback, object? state)
    {
        Interlocked.Increment(ref _dropped);
        DroppedWork.Record(Name, level, reason, callback, state);
    }

    // ---- Validation -----------------------------------------------------------------------------------------------------------

    internal int ValidateLevel(int level)
    {
        if ((uint)level >= (uint)Levels)
        {
            ThrowLevelOutOfRange(level);
        }

        return level;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowLevelOutOfRange(int level) =>
        throw new ArgumentOutOfRangeException(
            nameof(level), level, $"Level must be between 0 and {Levels - 1} for {Subject} ({Levels} levels; higher runs first).");
}
