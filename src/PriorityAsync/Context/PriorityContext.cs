using System;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A single-threaded scheduler with several priority levels: continuations and callbacks queue per level, and the loop always runs
/// the oldest item of the highest non-empty level. Each level has its own cached <see cref="PrioritySynchronizationContext"/>, so
/// an <c>await</c> resumes at the level its method was running at.
/// </summary>
/// <remarks>
/// <para>Get one with <see cref="Run(Func{Task}, PriorityContextOptions?)"/> (the calling thread runs the loop until the entry point
/// and all <c>async void</c> work are done) or with <see cref="PriorityContextThread"/> (a dedicated loop thread).</para>
/// <para>Thread safety: every member may be called from any thread. No two callbacks ever run concurrently. Within a level, items run
/// in the order they were queued (for items queued by one thread, in that thread's program order).</para>
/// </remarks>
public sealed partial class PriorityContext : IPriorityScheduler, IItemDropper
{
    // ---- Protocols (read before changing anything below) -------------------------------------------------------------------
    //
    // Posting (Enqueue): the loop thread enqueues without fences (it is the only consumer). Any other thread enqueues with a full
    // fence (LevelQueues.Enqueue), then reads _state and _parked:
    //   * state Finished after the enqueue: the loop may already have drained for the last time, so this thread drains and drops
    //     whatever is left (DropRemaining). TryDequeue hands each item to exactly one thread, so nothing is run or dropped twice.
    //   * _parked == 1: the loop is parked or about to park; wake it (only the thread that swaps 1 -> 0 sets the event).
    //
    // Parking (Park): the loop writes _parked = 1 with an interlocked exchange (full fence), then re-checks for work, for the end
    // condition and for a fault. Producers publish, fence, then read _parked. Fences on both sides (store-buffer pattern): either
    // the loop's re-check sees the work, or the producer sees _parked == 1 and sets the event. The event is reset after every wake
    // and the loop always re-checks before parking again, so a stale Set costs one extra lap, never a lost wake-up.
    //
    // Ending (RunLoop): the loop ends when no operation is outstanding (_outstanding == 0) and no work is queued, or on a fault.
    // It first stops treating its thread as the loop thread (_loopThreadId = 0), then publishes Finished with an interlocked write,
    // then drains and drops what is left. A post that raced the end is either drained by the loop or by its own poster (above).
    //
    // Invariant: every queued item is either run exactly once by the loop, or dropped exactly once (counted, reported through
    // WorkDropped; a dropped Send releases its sender with ObjectDisposedException; a dropped Prioritize continuation resumes on the
    // thread pool, where GetResult throws ObjectDisposedException). Dropping never stops early: a throwing WorkDropped handler
    // is rethrown only after every remaining item was dropped (DropRemaining).
    //
    // ExecutionContext (E1, Context/ExecutionContextFlow.cs): every item starts in the ExecutionContext it was queued with, and in
    // nothing else. A plain callback (Post and Send of a level's or a controller's context, InvokeAsync, Run's entry, a controller's
    // Post and Run) carries the context captured where it entered the loop, as the thread pool, WPF's Dispatcher and AsyncEx's tasks
    // do; everything else carries none and starts in the default context: the continuation of an async method (its state machine
    // restores the context it captured; UnsafeOnCompleted captures nothing, as the runtime's awaiters), a task (it runs in its own), a
    // timer firing (it runs in the timer's), the loop's own items. "Nothing set" is stored as null, so the common case costs a
    // reference compare at the post and one at the dispatch. WorkItem.Invoke enters the item's context before the callback, so what one
    // item leaves on the thread (an AsyncLocal value, an open Activity, a logging scope) is gone before the next starts; Park enters
    // the default context before it sleeps; and the loop's thread gets the context it had when the loop started back when the loop
    // ends (OwnerContext), so nothing reaches the caller of Run. Continuations that the runtime posts through Post (an await on a
    // Task) capture the completing thread's context: usually the default one (nothing stored); otherwise the box switches to its own
    // at once, which costs a switch and never changes what the method sees.
    //
    // Timers (Timers/PriorityContext.Timers.cs, and Timers/LoopTimers.cs, which PriorityThreadPool shares): each context keeps its
    // armed loop timers (its TimeProvider's ITimers and pending Priority.Delay sources) in a min-heap keyed by (due Stopwatch
    // timestamp, arming sequence number), guarded by the timer lock (LoopTimers._lock, "_timerLock" below).
    // Arming, Change, Dispose and cancellation take the lock from any thread; they are not the hot path.
    //   * The loop learns that a timer is due from one int flag, _timersDue, read between items (DrainReady), in Park's re-check, and
    //     at Prioritize's inline check (CanRunInlineAt): one predictable branch per item, no clock read, no lock. When the flag is
    //     set, FireDueTimers clears it (full fence), takes the lock, reads the clock, and queues the firing of every timer whose due
    //     time has passed at the timer's level (EnqueueFromConsumer, a static callback with the timer as state: 0 B), in due order,
    //     then re-arms periodic ones and points the alarm at the new earliest due time. Strict priority then decides when each
    //     firing runs: FIFO behind the work already queued at its level.
    //   * Who raises the flag: the process-wide Alarm (Timers/Alarm.cs, one dedicated thread, never the thread pool) at the earliest
    //     due time, or the arming thread itself when the due time has already passed. Raising is an interlocked write (full fence)
    //     followed by WakeIfParked, so the parking protocol above covers it: Park's re-check after _parked = 1 includes the flag.
    //     Either the loop's re-check sees the flag, or the raiser sees _parked == 1 and sets the event.
    //   * Invariant (T0): while a timer is armed, either its due time is in the future and the alarm holds a due time no later than
    //     it, or the flag is set. (UpdateAlarmLocked restores it after every change of the heap's minimum, under the lock.) So no due
    //     timer is forgotten, and an idle loop parks until the earliest due time instead of waiting for a post.
    //   * A spurious raise (the earliest timer was disposed after the alarm was set) costs one lap: FireDueTimers finds nothing due
    //     and re-points the alarm.
    //   * Timers do not keep the loop alive (IsDone ignores them). When the loop finishes, the lock is taken once more to close the
    //     heap (_timersClosed: no arming after that) and every armed timer is dropped: counted, reported through WorkDropped with
    //     DropReason.TimerArmedAtFinish; a pending Priority.Delay resumes its awaiter on the thread pool with ObjectDisposedException.
    //   * Invariant (T3): a parked loop with an armed timer sleeps no longer than until the earliest due time, rounded up to a whole
    //     millisecond (the resolution of a timed wait): _earliestDue holds the heap's minimum, written under _timerLock with every
    //     pointing of the alarm, and Park reads it after _parked = 1 and waits with that timeout; when the wait runs out and the time
    //     has come, the loop raises the flag itself. So a due timer on an idle loop fires within that resolution plus one wake-up,
    //     the loop's own. A timer armed after Park read the value is covered by T0 (the alarm, or the arming thread, raises the flag
    //     and wakes the loop): T3 makes a firing sooner, it never is what guarantees it.
    //   * A clock that throws (the options' TimeProvider; T4-T6 at the top of Timers/LoopTimers.cs): FireDue never throws; it hands
    //     the provider's exception to OnClockFailed, which sets _fault (not through UnhandledException: no handler may mark it
    //     handled) and leaves the flag raised, so FireDueTimers returns false wherever it is called: between items the loop stops
    //     at once; at a checkpoint or an inline Prioritize the running item does not go on (its continuation is queued, and dropped
    //     when the loop stops after the item). Nothing is added to the per-item path: the flag's branch is where it was.
    //   * Invariants of each kind of timer: T1, T2 in Timers/LoopTimer.cs, D1 in Timers/DelaySource.cs, A1 in Timers/Alarm.cs.
    //   Lock order: _timerLock, then the alarm's lock. Nothing that runs user code (callbacks, WorkDropped) runs under either.
    //
    // Controllers (Controllers/PriorityTaskController.cs, its own protocol C1-C3): a controller keeps its items in a FIFO of its own and queues
    // one "activation" here, an ordinary item. The loop and Post do nothing special for it; only Drop does: when the context drops
    // an activation, the controller drops (counts, reports) its own queued items instead, so they are never lost silently.
    //
    // Watchdog (on by default, Diagnostics/PriorityContext.Stall.cs, Diagnostics/WatchdogThread.cs): the process-wide watchdog thread
    // reads _runPerLevel, the queue counts and (under _timerLock) whether a timer is overdue, and writes nothing the loop or the
    // producers read, so it takes no part in the protocols above and costs the hot path nothing.
    //
    // Diagnostics (Diagnostics/PriorityContext.Diagnostics.cs): the loop reads _slowPaths once per item and Post once per post; while it is 0 (no
    // listener) nothing else is done. It is a hint, written by other threads without ordering: an item that sees a stale value is
    // merely observed, or not, and takes no part in the protocols above.
    //
    // Checkpoints and the time quota (Checkpoints/PriorityContext.Checkpoint.cs, Checkpoints/SliceClock.cs): the loop does nothing per item. The
    // process-wide slice clock compares the dispatch counter (_runPerLevel) between ticks and raises _sliceExpired with the count of
    // an item that has run a whole TimeSlice while work may wait; a checkpoint believes it only while the count still equals it (C1,
    // C2). A slice clock that sleeps (every loop parked) leaves a sentinel in the flag, and the next checkpoint wakes it (S1): the
    // quota adds nothing to the loop, not even to Park.

    private const int StateNotStarted = 0;
    private const int StateRunning = 1;
    private const int StateCompleted = 2;
    private const int StateFaulted = 3;

    [ThreadStatic]
    private static PriorityContext? t_running;

    internal static readonly SendOrPostCallback s_runAction = static state => ((Action)state!)();

    // Distinct from s_runAction by reference, so a dropped Prioritize continuation can be recognised and resumed elsewhere.
    internal static readonly SendOrPostCallback s_runPrioritizeContinuation = static state => ((Action)state!)();

    private readonly LevelQueues _queues;
    private readonly PrioritySynchronizationContext[] _syncContexts;
    private readonly PriorityTaskScheduler[] _schedulers;
    private readonly TaskFactory[] _factories;
    private readonly long[] _runPerLevel;
    private readonly int _idleSpinCount;
    private readonly ManualResetEventSlim _wake = new(false, spinCount: 0);

    private int _state;
    private int _loopThreadId;
    private int _parked;
    private int _outstanding;
    private long _dropped;
    private long _wakeCount;
    private ExceptionDispatchInfo? _fault;

    internal PriorityContext(PriorityContextOptions? options)
    {
        options ??= new PriorityContextOptions();
        options.Validate();
        Levels = options.Levels;
        DefaultLevel = options.DefaultLevel;
        Name = options.Name ?? nameof(PriorityContext);
        _idleSpinCount = options.IdleSpinCount;
        _stallTimeout = options.StallTimeout;
        _timeSliceTicks = TimeSliceOption.ToStopwatchTicks(options.TimeSlice); // Checkpoints/PriorityContext.Checkpoint.cs
        _timeSliceWatched = options.TimeSlice is not null && !options.TimeSliceDrivenByTests && options.TimeProvider is not VirtualTimeProvider;
        TimeSliceTickMilliseconds = TimeSliceOption.ToTickMilliseconds(options.TimeSlice);

        _queues = new LevelQueues(Levels);
        _runPerLevel = new long[Levels];
        _clock = options.Clock ?? options.TimeProvider as VirtualTimeProvider; // on virtual time, the policies and instruments too
        InitializePolicy(options.Policy); // Policies/PriorityContext.Policies.cs
        SchedulerOperations.CreateLevelSurfaces(
            this,
            Levels,
            static (context, level) => new PrioritySynchronizationContext(context, level),
            static (context, level) => new PriorityTaskScheduler(context, level),
            out _syncContexts,
            out _schedulers,
            out _factories);

        // Timers/LoopTimers.cs, shared with PriorityThreadPool: the system clock, or the given provider's.
        _loopTimers = new LoopTimers(this, options.TimeProvider, "PriorityContextOptions.TimeProvider");
        _timeProvider = LoopTimeProvider.Create(_loopTimers, level: -1);
        _levelTimeProviders = new LoopTimeProvider?[Levels];
        Scope = TaskScope.CreateRoot(this);
        _virtualClock = VirtualTimeProvider.AttachLoop(options.TimeProvider, this); // last: throws if another loop drives that clock
    }

    /// <summary>Raised when a callback escapes with an exception (typically from an <c>async void</c> method). Raised on the loop thread.</summary>
    /// <remarks>Set <see cref="PriorityUnhandledExceptionEventArgs.Handled"/> to keep the loop running; otherwise the context faults.</remarks>
    public event EventHandler<PriorityUnhandledExceptionEventArgs>? UnhandledException;

    /// <summary>
    /// Raised for every callback the context will never run: posted after the context finished, or still queued when it faulted.
    /// Raised on the thread that found the callback (the poster, or the loop while it finishes). Handlers must not throw; if one does,
    /// the remaining callbacks are still dropped and reported first, then the exception propagates to the poster (or, from the loop, to
    /// the owner of the loop unless it faulted).
    /// </summary>
    public event EventHandler<WorkDroppedEventArgs>? WorkDropped;

    /// <summary>Gets the context the calling code runs in, or <see langword="null"/> outside any priority context.</summary>
    public static PriorityContext? Current => CurrentLevelContext?.Context;

    /// <summary>Gets the level the calling code runs at, inside a <see cref="PriorityContext"/>; <see cref="Priority.CurrentLevel"/> reads it
    /// on either scheduler (a <see cref="PriorityContext"/> or a <see cref="PriorityThreadPool"/>).</summary>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/> (on a
    /// <see cref="PriorityThreadPool"/> neither).</exception>
    public static int CurrentLevel => (CurrentLevelContext ?? throw NotInContext(
        "PriorityContext.CurrentLevel",
        "Priority.CurrentLevel reads the level on either scheduler (a PriorityContext or a PriorityThreadPool), and PriorityContext.TryGetCurrentLevel asks without throwing.")).Level;

    /// <summary>Gets the level the calling code runs at, without throwing outside a context.</summary>
    /// <param name="level">The level, or 0 when the method returns <see langword="false"/>.</param>
    /// <returns>Whether the calling code runs inside a <see cref="PriorityContext"/> (that is, <see cref="Current"/> is not
    /// <see langword="null"/>).</returns>
    /// <remarks>The same as <c>(SynchronizationContext.Current as PrioritySynchronizationContext)?.Level</c>, which also tells the
    /// context (<see cref="PrioritySynchronizationContext.Context"/>).</remarks>
    public static bool TryGetCurrentLevel(out int level)
    {
        if (CurrentLevelContext is { } current)
        {
            level = current.Level;
            return true;
        }

        level = 0;
        return false;
    }

    /// <summary>Gets the number of levels; they are numbered 0 to <c>Levels - 1</c>, and a higher number runs first.</summary>
    public int Levels { get; }

    /// <summary>Gets the level the entry point of <see cref="Run(Func{Task}, PriorityContextOptions?)"/> starts at.</summary>
    public int DefaultLevel { get; }

    /// <summary>Gets the name given in <see cref="PriorityContextOptions.Name"/>.</summary>
    public string Name { get; }

    /// <summary>Gets 1: no two callbacks of a <see cref="PriorityContext"/> ever run at once.</summary>
    public int MaximumConcurrency => 1;

    /// <summary>Gets the state of the loop.</summary>
    public PriorityContextState State => Volatile.Read(ref _state) switch
    {
        StateNotStarted => PriorityContextState.NotStarted,
        StateRunning => PriorityContextState.Running,
        StateCompleted => PriorityContextState.Completed,
        _ => PriorityContextState.Faulted,
    };

    internal static PrioritySynchronizationContext? CurrentLevelContext => SynchronizationContext.Current as PrioritySynchronizationContext;

    internal LevelQueues Queues => _queues;

    internal bool IsFinished => Volatile.Read(ref _state) >= StateCompleted;

    internal bool IsOnLoopThread => Environment.CurrentManagedThreadId == _loopThreadId;

    internal ExceptionDispatchInfo? Fault => _fault;

    /// <summary>For tests: whether the loop is parked (or about to park).</summary>
    internal bool IsParked => Volatile.Read(ref _parked) != 0;

    /// <summary>For tests: how many times a producer had to signal the parked loop.</summary>
    internal long WakeCount => Interlocked.Read(ref _wakeCount);

    // ---- Entry points --------------------------------------------------------------------------------------------------

    /// <summary>Runs <paramref name="entry"/> inside a new priority context on the calling thread, and returns when it and all
    /// <c>async void</c> work it started are done.</summary>
    /// <param name="entry">The entry point; it starts at <see cref="PriorityContextOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context.</exception>
    /// <remarks>An exception thrown by <paramref name="entry"/>, or escaping an <c>async void</c> method and not handled through
    /// <see cref="UnhandledException"/>, is rethrown here as is, not wrapped in an <see cref="AggregateException"/>.</remarks>
    public static void Run(Action entry, PriorityContextOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(entry);
        RunCore(
            () =>
            {
                entry();
                return Task.CompletedTask;
            },
            options).GetAwaiter().GetResult();
    }

    /// <summary>Runs the asynchronous <paramref name="entry"/> inside a new priority context on the calling thread, and returns when
    /// its task and all <c>async void</c> work it started are done.</summary>
    /// <param name="entry">The entry point; it starts at <see cref="PriorityContextOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context, or <paramref name="entry"/> returned <see langword="null"/>.</exception>
    /// <remarks>An exception of the entry task, or escaping an <c>async void</c> method and not handled through
    /// <see cref="UnhandledException"/>, is rethrown here as is, not wrapped in an <see cref="AggregateException"/>.</remarks>
    public static void Run(Func<Task> entry, PriorityContextOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(entry);
        RunCore(entry, options).GetAwaiter().GetResult();
    }

    /// <summary>Runs the asynchronous <paramref name="entry"/> inside a new priority context on the calling thread, and returns its
    /// result once it and all <c>async void</c> work it started are done.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="entry">The entry point; it starts at <see cref="PriorityContextOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <returns>The entry task's result.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context, or <paramref name="entry"/> returned <see langword="null"/>.</exception>
    public static TResult Run<TResult>(Func<Task<TResult>> entry, PriorityContextOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(entry);
        Task<TResult>? typed = null;
        RunCore(() => typed = entry(), options).GetAwaiter().GetResult();
        return typed!.GetAwaiter().GetResult();
    }

    private static Task RunCore(Func<Task> entry, PriorityContextOptions? options)
    {
        ThrowIfLoopRunningOnThisThread(nameof(Run));
        var context = new PriorityContext(options);
        var start = new EntryStart(context, entry);
        context.OperationStarted(); // released when the entry task completes
        // The entry sees what its caller set (AsyncLocal values, Activity.Current), as Task.Run's delegate would (E1).
        context._queues.Enqueue(context.DefaultLevel, new WorkItem(EntryStart.Callback, start, ExecutionContextFlow.Capture()));
        context.RunLoop();
        context._fault?.Throw();
        TaskScope.ThrowFirst(context._rootFailures); // the entry's own failure among them, in the order they happened
        return start.Task!;
    }

    // ---- Per-level views -----------------------------------------------------------------------------------------------

    /// <summary>Gets the cached <see cref="SynchronizationContext"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public PrioritySynchronizationContext GetSynchronizationContext(int level) => _syncContexts[ValidateLevel(level)];

    /// <summary>Gets the cached <see cref="TaskScheduler"/> of <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public PriorityTaskScheduler GetScheduler(int level) => _schedulers[ValidateLevel(level)];

    /// <summary>Gets a cached <see cref="TaskFactory"/> whose tasks run at <paramref name="level"/>.</summary>
    /// <remarks>The factory hides its scheduler (<see cref="TaskCreationOptions.HideScheduler"/>,
    /// <see cref="TaskContinuationOptions.HideScheduler"/>), as Nito.AsyncEx's <c>AsyncContext.Factory</c> and <see cref="Task.Run(Action)"/>
    /// do: inside its tasks <see cref="TaskScheduler.Current"/> is <see cref="TaskScheduler.Default"/>, so a nested
    /// <c>Task.Factory.StartNew</c> or <c>ContinueWith</c> without a scheduler runs on the thread pool, not on the loop. An <c>await</c>
    /// in such a task still resumes at <paramref name="level"/> (the level travels with the <see cref="SynchronizationContext"/>); nested
    /// work that belongs on the loop asks for it with <see cref="GetTaskFactory(int)"/> or <see cref="GetScheduler(int)"/>.</remarks>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The same instance for every call with the same level.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public TaskFactory GetTaskFactory(int level) => _factories[ValidateLevel(level)];

    SynchronizationContext IPriorityScheduler.GetSynchronizationContext(int level) => GetSynchronizationContext(level);

    TaskScheduler IPriorityScheduler.GetScheduler(int level) => GetScheduler(level);

    /// <summary>
    /// Moves the rest of the calling method onto this context at <paramref name="level"/>. From inside the context it completes at
    /// once when nothing is queued above <paramref name="level"/>; from any other thread it always hops onto the loop.
    /// </summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first.</param>
    /// <returns>An awaitable.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public PriorityAwaitable Prioritize(int level) => new(this, ValidateLevel(level), alwaysQueue: false);

    /// <summary>Queues the rest of the calling method at the back of <paramref name="level"/>, always (it never completes at once).</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>An awaitable.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    public PriorityAwaitable Yield(int level) => new(this, ValidateLevel(level), alwaysQueue: true);

    /// <summary>Takes a moment's snapshot of the queues and counters, for diagnostics.</summary>
    /// <returns>A new snapshot.</returns>
    public PriorityContextSnapshot GetSnapshot() =>
        new(State, _queues, _runPerLevel, Interlocked.Read(ref _dropped), Volatile.Read(ref _outstanding));

    /// <summary>Describes the context.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => $"{Name} ({Levels} levels, {State})";

    // ---- Queueing --------------------------------------------------------------------------------------------------------

    /// <summary>Queues one item at <paramref name="level"/>, from any thread. <paramref name="executionContext"/> is the context the item
    /// runs in (E1): what a plain callback captured where it entered the loop, or <see langword="null"/> (the default context) for
    /// everything that restores its own.</summary>
    internal void Enqueue(int level, SendOrPostCallback callback, object? state, ExecutionContext? executionContext = null)
    {
        // One field read when no listener wants queue-wait times (see Diagnostics/PriorityContext.Diagnostics.cs); the aging policy
        // always stamps.
        long enqueuedAt = ((_slowPaths | _stampAlways) & SlowPaths.WaitTime) == 0 ? 0 : Timestamp();
        var item = new WorkItem(callback, state, executionContext, enqueuedAt);
        if (Environment.CurrentManagedThreadId == _loopThreadId)
        {
            // The loop thread is running (it is us), so it is neither parked nor finished: no fence, no wake-up.
            _queues.EnqueueFromConsumer(level, item);
            return;
        }

        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            Drop(level, item, DropReasonNow());
            return;
        }

        _queues.Enqueue(level, item); // ends with a full fence

        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            // The loop finished while we were enqueueing and may have drained for the last time before our item landed.
            DropRemaining()?.Throw(); // a throwing WorkDropped handler reaches this poster, but only after every item was dropped
            return;
        }

        WakeIfParked();
    }

    /// <summary>Queues the continuation of an awaiting method (<c>Prioritize</c>, <c>Yield</c>, <c>Checkpoint</c>): from
    /// <c>OnCompleted</c> in the caller's <see cref="ExecutionContext"/>, from <c>UnsafeOnCompleted</c> (the compiler's choice: the state
    /// machine restores its own) in none, as the runtime's awaiters do.</summary>
    internal void QueueContinuation(int level, Action continuation, bool flowExecutionContext)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        Enqueue(level, s_runPrioritizeContinuation, continuation, flowExecutionContext ? ExecutionContextFlow.Capture() : null);
    }

    internal void Send(int level, SendOrPostCallback callback, object? state)
    {
        if (Environment.CurrentManagedThreadId == _loopThreadId)
        {
            // On the loop thread: run inline (queueing and waiting would deadlock), at the target level.
            InlineAt.Run(_syncContexts[level], callback, state);
            return;
        }

        if (IsFinished)
        {
            throw new ObjectDisposedException(Name, $"The PriorityContext '{Name}' has finished ({State}), so Send at level {level} cannot run; the callback did not run. Send needs a running loop; Post is still accepted after the end (the callback is dropped and reported through WorkDropped).");
        }

        SendWaiter waiter = SendWaiter.Rent(callback, state);
        Enqueue(level, SendWaiter.RunCallback, waiter, ExecutionContextFlow.Capture()); // the callback sees the sender's context (E1)
        waiter.WaitAndRethrow(Name);
    }

    internal void OperationStarted() => Interlocked.Increment(ref _outstanding);

    internal void OperationCompleted()
    {
        // An unmatched call throws instead of pushing the count below zero (a Debug.Assert here used to fail the process in Debug
        // builds); the compare-exchange is the full fence the wake-up protocol needs before WakeIfParked reads _parked.
        int current = SchedulerOperations.Release(ref _outstanding, nameof(PriorityContext), Name);
        if (current == 1)
        {
            WakeIfParked();
        }
    }

    /// <summary>Whether code that wants to run at <paramref name="level"/> may go on at once: on the loop thread, nothing queued above.</summary>
    /// <remarks>A checkpoint: due timers are queued first (see "Timers"), so a due timer above <paramref name="level"/> runs first.
    /// The thread check compares Thread.CurrentThread with _loopThread (set while the loop runs): the JIT reuses the thread-local base
    /// it loaded for SynchronizationContext.Current, where Environment.CurrentManagedThreadId is a call.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool CanRunInlineAt(int level) =>
        Thread.CurrentThread == _loopThread
        && (Volatile.Read(ref _timersDue) == 0 || FireDueTimers()) // false: the clock threw, the context faulted (T4)
        && !_queues.HasWorkAbove(level); // HasWorkAbove: consumer only, and we are it

    /// <summary>The inline end of an <c>await Prioritize</c> (its <c>IsCompleted</c>): when the caller may go on at once, makes the level
    /// current there and then, so that <c>GetResult</c> has only the finished check left (<see cref="ThrowIfResumedAfterFinish"/>).</summary>
    /// <remarks>Inlined: on the loop thread and already at the level (an inline <c>await Prioritize(sameLevel)</c>), one thread-local
    /// base, three field reads and a compare. A queued continuation needs nothing here: the loop makes its level current before it runs
    /// it, and a dropped one runs on the thread pool after the context finished, where <c>GetResult</c> throws.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryContinueInlineAt(int level)
    {
        if (!CanRunInlineAt(level))
        {
            return false;
        }

        PrioritySynchronizationContext target = _syncContexts[level];
        if (!ReferenceEquals(SynchronizationContext.Current, target))
        {
            SynchronizationContext.SetSynchronizationContext(target);
        }

        return true;
    }

    /// <summary>The end of an <c>await Prioritize</c> or <c>await Checkpoint</c>: report that the context finished before the method
    /// could resume (its continuation was dropped and resumed on the thread pool).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void ThrowIfResumedAfterFinish(int level)
    {
        if (IsFinished)
        {
            ThrowResumedAfterFinish(level);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowResumedAfterFinish(int level) =>
        throw new ObjectDisposedException(Name, $"The PriorityContext '{Name}' finished before the awaiting method could resume at level {level}.");

    // ---- The loop --------------------------------------------------------------------------------------------------------

    /// <summary>Runs the loop on the calling thread until no operation is outstanding and no work is queued, or until a fault.</summary>
    internal void RunLoop()
    {
        ThrowIfLoopRunningOnThisThread(nameof(RunLoop));
        if (Interlocked.CompareExchange(ref _state, StateRunning, StateNotStarted) != StateNotStarted)
        {
            throw new InvalidOperationException($"The PriorityContext '{Name}' has already run; a context runs its loop once.");
        }

        SynchronizationContext? previousSyncContext = SynchronizationContext.Current;
        OwnerContext owner = OwnerContext.Save(); // given back as the loop ends: nothing an item sets reaches the owner (E1)
        t_running = this;
        Volatile.Write(ref _loopThreadId, Environment.CurrentManagedThreadId);

        // Null when StallTimeout is off. Checked by the watchdog thread from _runPerLevel, the queue counts and the timer heap: nothing
        // on the hot path.
        Watchdog? watchdog = StartWatchdog();

        // Visible to the observable instruments from now on, and _slowPaths set from what is listening (Diagnostics/PriorityContext.Diagnostics.cs).
        ContextRegistry.Register(this);
        OnLoopStarting(); // _loopThread; the slice clock watches the dispatch counter: nothing per item (Checkpoints/PriorityContext.Checkpoint.cs)
        try
        {
            while (true)
            {
                DrainReady();
                if (_fault is not null || IsDone())
                {
                    break;
                }

                Park();
            }
        }
        finally
        {
            CompleteRootScope(); // every root child ended before (each held the loop), unless the loop faulted
            ContextRegistry.Unregister(this);
            OnLoopEnding();
            watchdog?.Dispose();
            Volatile.Write(ref _loopThreadId, 0);
            Interlocked.Exchange(ref _state, _fault is null ? StateCompleted : StateFaulted);
            t_running = null;
            SynchronizationContext.SetSynchronizationContext(previousSyncContext);
            owner.Restore();

            // A throwing WorkDropped handler surfaces to the loop's owner (Run, PriorityContextThread.Completion) unless the loop
            // faulted: the fault is what stopped it, and it is what surfaces.
            ExceptionDispatchInfo? handlerFailure = DropRemaining();
            ExceptionDispatchInfo? timerHandlerFailure = DropArmedTimers();
            handlerFailure ??= timerHandlerFailure;
            if (_fault is null)
            {
                handlerFailure?.Throw();
            }
        }
    }

    private bool IsDone() => Volatile.Read(ref _outstanding) <= 0 && _queues.NonEmptyMask == 0;

    /// <summary>Runs items until none is ready or the context faults; <typeparamref name="TPolicy"/> chooses each one (a struct: one
    /// compiled copy per policy, see Policies/PriorityContext.Policies.cs).</summary>
    private void DrainReady<TPolicy>(TPolicy policy)
        where TPolicy : struct, IDispatchPolicy
    {
        int level = -1;
        while (true)
        {
            try
            {
                policy.OnDrainStart();
                while (true)
                {
                    if (Volatile.Read(ref _timersDue) != 0 && !FireDueTimers()) // the one branch the timers add per item (see "Timers")
                    {
                        return; // the clock threw: the context faulted (T4)
                    }

                    if (!policy.TryDequeue(_queues, out WorkItem item, out level))
                    {
                        break;
                    }

                    // The level is carried by the current SynchronizationContext: set it before every item, so awaits inside
                    // capture this level's context.
                    SynchronizationContext.SetSynchronizationContext(_syncContexts[level]);
                    _runPerLevel[level]++;

                    // Diagnostics: one field read per item; every per-item timestamp or event is behind it.
                    if (_slowPaths == SlowPaths.None)
                    {
                        item.Invoke();
                    }
                    else
                    {
                        InvokeObserved(in item, level);
                    }

                    policy.OnItemEnd(level);
                }

                return;
            }
            catch (Exception ex)
            {
                _lastItemEnd = 0; // the handler's time is nobody's run time
                if (!OnUnhandledException(ex, level))
                {
                    return;
                }
            }
        }
    }

    private bool OnUnhandledException(Exception exception, int level)
    {
        _fault = SchedulerOperations.RaiseUnhandled(this, UnhandledException, Name, exception, level);
        return _fault is null;
    }

    private void Park()
    {
        _lastItemEnd = 0; // an idle gap is nobody's run time (Diagnostics/PriorityContext.Diagnostics.cs)
        ExecutionContextFlow.Enter(null); // idle in the default context: what the last item left is not kept alive (E1)
        for (int i = 0; i < _idleSpinCount; i++)
        {
            if (HasWorkOrShouldStop())
            {
                return;
            }

            Thread.SpinWait(20);
        }

        Interlocked.Exchange(ref _parked, 1); // full fence before the re-check (see "Parking" above)
        if (!HasWorkOrShouldStop())
        {
            // No longer than until the earliest loop timer (T3): the loop wakes itself for it, one wake-up, instead of waiting for the
            // alarm thread to wake it (two). The alarm still guarantees the firing (T0); this wait only makes it sooner.
            int timeout = _loopTimers.ParkTimeoutMilliseconds();
            if (timeout == Timeout.Infinite)
            {
                if (!TryAdvanceVirtualClock()) // a VirtualTimeProvider jumps to its earliest timer instead (V1, Timers/PriorityContext.VirtualTime.cs)
                {
                    _wake.Wait();
                }
            }
            else if (!_wake.Wait(timeout))
            {
                OnParkTimedOut();
            }
        }

        _wake.Reset();
        Volatile.Write(ref _parked, 0);

        // Nothing else before the next item: a sleeping slice clock is woken by this loop's next checkpoint, not here (S1 in
        // Checkpoints/SliceClock.cs), so a wake-up costs what the event costs.
    }

    private bool HasWorkOrShouldStop() =>
        _queues.NonEmptyMask != 0 || Volatile.Read(ref _outstanding) <= 0 || Volatile.Read(ref _timersDue) != 0;

    private void WakeIfParked()
    {
        if (Volatile.Read(ref _parked) != 0 && Interlocked.Exchange(ref _parked, 0) != 0)
        {
            Interlocked.Increment(ref _wakeCount); // slow path only: the loop was parked
            _wake.Set();
        }
    }

    // ---- Dropping --------------------------------------------------------------------------------------------------------

    private DropReason DropReasonNow() =>
        Volatile.Read(ref _state) == StateFaulted ? DropReason.AbandonedAfterFault : DropReason.PostedAfterCompletion;

    /// <summary>After the loop finished: takes every remaining item (highest level first) and drops it. Any thread.</summary>
    /// <returns>The first exception thrown by a <see cref="WorkDropped"/> handler, for the caller to rethrow, or null.</returns>
    /// <remarks>A throwing handler must not stop the drain: the items behind it would stay queued forever (a blocked Send among them
    /// would never return), since later posters drop their own item without draining. So every item is dropped first.</remarks>
    private ExceptionDispatchInfo? DropRemaining() => _queues.DrainAll(this, DropReasonNow());

    /// <summary>Counts and reports one item the loop will never run; a controller's activation hands the drop to its controller.</summary>
    void IItemDropper.Drop(int level, in WorkItem item, DropReason reason) => Drop(level, item, reason);

    private void Drop(int level, in WorkItem item, DropReason reason)
    {
        if (item.Callback == ControllerActivation.Callback)
        {
            // Not user work: the controller counts and reports each of its own queued items (Controllers/PriorityContext.Controllers.cs).
            ((ControllerActivation)item.State!).OnDroppedByContext(reason);
            return;
        }

        CountDrop(level, reason, item.Callback, item.State);
        OnDropped(level, item, reason);
    }

    private void OnDropped(int level, WorkItem item, DropReason reason)
    {
        DroppedWork.Release(item); // a blocked Send, an awaiting method, an InvokeAsync task, a pending delay: none hangs

        WorkDropped?.Invoke(this, new WorkDroppedEventArgs(level, item.Callback, item.State, reason));
    }

    // ---- Validation ------------------------------------------------------------------------------------------------------

    internal int ValidateLevel(int level)
    {
        if ((uint)level >= (uint)Levels)
        {
            ThrowLevelOutOfRange(level);
        }

        return level;
    }

    private void ThrowLevelOutOfRange(int level) =>
        throw new ArgumentOutOfRangeException(nameof(level), level, $"Level must be between 0 and {Levels - 1} for the PriorityContext '{Name}' ({Levels} levels; higher runs first).");

    /// <summary>A member only the single loop has (<paramref name="operation"/>) was called off any <see cref="PriorityContext"/>: the
    /// message says what the caller runs on instead and, in <paramref name="elsewhere"/>, what to use on a <see cref="PriorityThreadPool"/>.
    /// The members of <see cref="Priority"/>, which work on both schedulers, throw <see cref="SchedulerOperations.NotOnEitherScheduler"/>.</summary>
    internal static InvalidOperationException NotInContext(string operation, string elsewhere) =>
        new(SynchronizationContext.Current is PriorityThreadPoolSynchronizationContext pool
            ? $"{operation} can only be used inside a PriorityContext, and the calling code runs on the PriorityThreadPool " +
              $"'{pool.Pool.Name}' (at level {pool.Level}) instead. {elsewhere}"
            : $"{operation} can only be used inside a PriorityContext, and the calling code runs on neither a PriorityContext nor a " +
              $"PriorityThreadPool ({SchedulerOperations.DescribeCurrentSynchronizationContext()}). Start the work with PriorityContext.Run(...) " +
              $"or on a PriorityContextThread, and use context.Prioritize(level) to hop onto it. {elsewhere}");

    private static void ThrowIfLoopRunningOnThisThread(string operation)
    {
        if (t_running is { } running)
        {
            throw new InvalidOperationException(
                $"{operation} was called on a thread that is already running the loop of PriorityContext '{running.Name}'. " +
                "Nesting would block the outer loop; await the work instead, or run it on a PriorityContextThread.");
        }
    }

    /// <summary>Starts the entry point of Run as the first queued item, so it runs inside the loop at the default level.</summary>
    private sealed class EntryStart(PriorityContext context, Func<Task> entry)
    {
        public static readonly SendOrPostCallback Callback = static state => ((EntryStart)state!).Start();

        public Task? Task { get; private set; }

        private void Start()
        {
            Task? task;
            try
            {
                task = entry() ?? throw new InvalidOperationException("The entry delegate passed to PriorityContext.Run returned null instead of a Task.");
            }
            catch (Exception ex)
            {
                task = System.Threading.Tasks.Task.FromException(ex);
            }

            Task = task;
            task.ContinueWith(
                static (task, state) =>
                {
                    var context = (PriorityContext)state!;
                    context.Scope.OnRootBodyEnded(task); // the root scope's body ended: a failure cancels its children
                    context.OperationCompleted();
                },
                context,
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }
    }

    /// <summary>The <see cref="ExecutionContext"/> of the thread that runs the loop, as it was when the loop started: restored when the
    /// loop ends, so that the owner of <c>Run</c> gets its thread back as it lent it (E1), flow suppression included.</summary>
    private readonly struct OwnerContext
    {
        private readonly ExecutionContext _context;
        private readonly bool _flowSuppressed;

        private OwnerContext(ExecutionContext context, bool flowSuppressed)
        {
            _context = context;
            _flowSuppressed = flowSuppressed;
        }

        public static OwnerContext Save()
        {
            // A suppressed flow hides the thread's context from Capture: lift it for the loop's lifetime (items capture and restore
            // contexts of their own), and suppress it again at the end, so the owner's AsyncFlowControl.Undo still works.
            bool suppressed = ExecutionContext.IsFlowSuppressed();
            if (suppressed)
            {
                ExecutionContext.RestoreFlow();
            }

            return new OwnerContext(ExecutionContext.Capture()!, suppressed);
        }

        public void Restore()
        {
            ExecutionContext.Restore(_context);
            if (_flowSuppressed)
            {
                _ = ExecutionContext.SuppressFlow(); // the owner's own AsyncFlowControl undoes it
            }
        }
    }
}
