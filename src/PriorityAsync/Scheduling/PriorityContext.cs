using System;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// A single-threaded priority scheduler: continuations and callbacks queue per level, and the loop always runs the oldest item of the
/// highest non-empty level (or the <see cref="PriorityScheduler.Policy"/>'s choice). Each level has its own cached
/// <see cref="PrioritySynchronizationContext"/>, so an <c>await</c> resumes at the level its method was running at.
/// </summary>
/// <remarks>
/// <para>Get one with <see cref="Run(Func{Task}, PriorityContextOptions?)"/> (the calling thread runs the loop until the entry point
/// and all <c>async void</c> work are done), with <see cref="PriorityContextThread"/> (a dedicated loop thread), or with
/// <see cref="AttachToCurrentThread"/> (a thread the host owns, such as a game's main thread or a UI thread, drains it from its own
/// loop: <see cref="PriorityContextDriver"/>).</para>
/// <para>Thread safety: every member may be called from any thread. No two callbacks ever run concurrently. Within a level, items run
/// in the order they were queued (for items queued by one thread, in that thread's program order).</para>
/// </remarks>
public sealed partial class PriorityContext : PriorityScheduler
{
    // The loop's one SchedulerThread: bound (SchedulerThread.Current) on the loop's thread while it runs, on a host's thread while it is
    // attached ([H-DRAIN]); Send runs inline there. Who consumes the queues now is _consumer ([Q-CONSUMER]).
    private readonly SchedulerThread _loop;
    private readonly int _idleSpinCount;

    // The options' TimeProvider when it is a VirtualTimeProvider, which this loop advances when idle ([V-ADVANCE]); else null.
    private readonly VirtualTimeProvider? _virtualClock;

    // [H-BUDGET]: while a drain with a budget runs, its deadline on the loop timers' clock (long.MinValue once a checkpoint saw it
    // pass), and the levels the budget does not hold back; 0 otherwise. The host's thread only.
    private long _checkpointDeadline;
    private ulong _checkpointExempt;

    internal PriorityContext(PriorityContextOptions? options)
        : base(options ??= new PriorityContextOptions(), threadCount: 1, isLoop: true, virtualClock: options.TimeProvider as VirtualTimeProvider)
    {
        _loop = _threads[0];
        _idleSpinCount = options.IdleSpinCount;
        _virtualClock = VirtualTimeProvider.AttachLoop(options.TimeProvider, this); // last: a constructor that failed leaves it unbound
    }

    /// <summary>Gets the context the calling code runs in, or <see langword="null"/> outside any priority context.</summary>
    public static PriorityContext? Current => (SynchronizationContext.Current as PrioritySynchronizationContext)?.Scheduler as PriorityContext;

    /// <summary>Gets the level the calling code runs at, inside a <see cref="PriorityContext"/>; <see cref="Priority.CurrentLevel"/> reads
    /// it on any priority scheduler.</summary>
    /// <exception cref="InvalidOperationException">The caller is not running inside a <see cref="PriorityContext"/>.</exception>
    public static int CurrentLevel => TryGetCurrentLevel(out int level) ? level : throw NotInContext(
        "PriorityContext.CurrentLevel",
        "Priority.CurrentLevel reads the level on either scheduler (a PriorityContext or a PriorityThreadPool), and PriorityContext.TryGetCurrentLevel asks without throwing.");

    /// <summary>Gets the level the calling code runs at, without throwing outside a context.</summary>
    /// <param name="level">The level, or 0 when the method returns <see langword="false"/>.</param>
    /// <returns>Whether the calling code runs inside a <see cref="PriorityContext"/> (that is, <see cref="Current"/> is not
    /// <see langword="null"/>).</returns>
    public static bool TryGetCurrentLevel(out int level)
    {
        if (SynchronizationContext.Current is PrioritySynchronizationContext { Scheduler: PriorityContext } current)
        {
            level = current.Level;
            return true;
        }

        level = 0;
        return false;
    }

    /// <summary>
    /// Gets whether the calling code, running in this context, should yield now: work waits at a level above its own, or the running
    /// item has used up its time quota (<see cref="PrioritySchedulerOptions.TimeSlice"/>) and other work is waiting, or a host's drain
    /// with a budget has spent it (<see cref="PriorityContextDriver"/>). Exactly when <see cref="Checkpoint"/> would not complete at
    /// once. Costs a few field reads, no clock read (one in a host's drain with a budget).
    /// </summary>
    /// <exception cref="InvalidOperationException">The caller is not running inside this context.</exception>
    public bool ShouldYield => ShouldYieldAt(CurrentLevelContextOf(nameof(ShouldYield)).EffectiveLevel);

    /// <summary>For tests: whether the loop is parked (or about to park).</summary>
    internal bool IsParked => Volatile.Read(ref _loop.Parked) != 0;


    /// <summary>
    /// Lets more urgent work run, at a cheap point of a long computation: completes at once (without queueing or allocating) unless work
    /// waits at a level above the caller's, or the running item has used up its time quota and other work is waiting, or a host's drain
    /// with a budget has spent it; then the rest of the method is queued at the back of its level. The caller's level does not change.
    /// </summary>
    /// <returns>An awaitable.</returns>
    /// <exception cref="InvalidOperationException">The caller is not running inside this context.</exception>
    public CheckpointAwaitable Checkpoint() => new(CurrentLevelContextOf(nameof(Checkpoint)));

    /// <summary>Creates a <see cref="PriorityTaskController"/> whose work runs on this context at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first. <see cref="PriorityTaskController.SetLevel"/> changes it later.</param>
    /// <returns>A new controller.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <exception cref="ObjectDisposedException">The context has finished.</exception>
    public PriorityTaskController CreateController(int level) => new(this, level);

    // ---- Entry points -------------------------------------------------------------------------------------------------------------

    /// <summary>Runs <paramref name="entry"/> inside a new priority context on the calling thread, and returns when it and all
    /// <c>async void</c> work it started are done.</summary>
    /// <param name="entry">The entry point; it starts at <see cref="PrioritySchedulerOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context.</exception>
    /// <remarks>An exception thrown by <paramref name="entry"/>, or escaping an <c>async void</c> method and not handled through
    /// <see cref="PriorityScheduler.UnhandledException"/>, is rethrown here as is, not wrapped in an <see cref="AggregateException"/>.</remarks>
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
    /// <param name="entry">The entry point; it starts at <see cref="PrioritySchedulerOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context, or <paramref name="entry"/> returned <see langword="null"/>.</exception>
    /// <remarks>An exception of the entry task, or escaping an <c>async void</c> method and not handled through
    /// <see cref="PriorityScheduler.UnhandledException"/>, is rethrown here as is, not wrapped in an <see cref="AggregateException"/>.</remarks>
    public static void Run(Func<Task> entry, PriorityContextOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(entry);
        RunCore(entry, options).GetAwaiter().GetResult();
    }

    /// <summary>Runs the asynchronous <paramref name="entry"/> inside a new priority context on the calling thread, and returns its
    /// result once it and all <c>async void</c> work it started are done.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="entry">The entry point; it starts at <see cref="PrioritySchedulerOptions.DefaultLevel"/>.</param>
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

    /// <summary>Runs the synchronous <paramref name="entry"/> inside a new priority context on the calling thread (Nito.AsyncEx's
    /// <c>AsyncContext.Run(Func&lt;T&gt;)</c>), and returns its result once it and all <c>async void</c> work it started are done.</summary>
    /// <typeparam name="TResult">The result type.</typeparam>
    /// <param name="entry">The entry point; it starts at <see cref="PrioritySchedulerOptions.DefaultLevel"/>.</param>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults.</param>
    /// <returns>The entry's result.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entry"/> is <see langword="null"/>.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs a priority context.</exception>
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

    private static Task RunCore(Func<Task> entry, PriorityContextOptions? options)
    {
        ThrowIfLoopRunningOnThisThread(nameof(Run));
        var context = new PriorityContext(options);
        var start = new EntryStart(context, entry); // the entry's end releases the owner's hold ([E-LIFE])
        // The entry sees what its caller set (AsyncLocal values, Activity.Current), as Task.Run's delegate would ([E-FLOW]).
        context._queues.Enqueue(context.DefaultLevel, new WorkItem(EntryStart.Callback, start, ExecutionContextFlow.Capture()));
        context.ThrowOutcome(context.RunLoop()); // the entry's own failure is among the root failures, in the order they happened
        return start.Task!;
    }

    // ---- The loop ([L-LOOP]) -----------------------------------------------------------------------------------------------------

    /// <summary>Runs the loop on the calling thread until no operation is outstanding and no work is queued, or until a fault; then
    /// ends the context ([E-LIFE], [E-END]).</summary>
    /// <returns>The first exception a <see cref="PriorityScheduler.WorkDropped"/> handler threw as the loop ended, or null: the owner
    /// decides whether to throw it (<see cref="PriorityScheduler.ThrowOutcome"/>); it is in <see cref="PriorityScheduler.Completion"/>
    /// anyway, unless the loop faulted.</returns>
    internal ExceptionDispatchInfo? RunLoop()
    {
        ThrowIfLoopRunningOnThisThread(nameof(RunLoop));
        Start();
        SynchronizationContext? previousSyncContext = SynchronizationContext.Current;
        OwnerContext owner = OwnerContext.Save(); // given back as the loop ends: nothing an item sets reaches the owner ([E-FLOW])
        _loop.Bind();
        BeginConsuming();
        ExceptionDispatchInfo? handlerFailure;
        try
        {
            var unlimited = default(NoDrainLimit);
            while (true)
            {
                DrainReady(ref unlimited);
                if (MustEnd(nothingRuns: true))
                {
                    break;
                }

                Park();
            }
        }
        finally
        {
            // The owner gets its thread back as it lent it before the end runs WorkDropped handlers on it ([E-FLOW]).
            SynchronizationContext.SetSynchronizationContext(previousSyncContext);
            owner.Restore();
            handlerFailure = End();
        }

        return handlerFailure;
    }

    private void DrainReady<TLimit>(ref TLimit limit)
        where TLimit : struct, IDrainLimit
    {
        switch (PolicyKind)
        {
            case PolicyKind.Aging:
                DrainReady(AgingView, ref limit);
                break;
            case PolicyKind.WeightedShares:
                DrainReady(SharesView, ref limit);
                break;
            default:
                DrainReady(default(StrictPriorityPolicy), ref limit);
                break;
        }
    }

    /// <summary>Runs items until none is ready, the context faults or <typeparamref name="TLimit"/> allows no level; <typeparamref
    /// name="TPolicy"/> chooses each one. The loop's limit allows every level, a constant: its copy has no limit code at all.</summary>
    private void DrainReady<TPolicy, TLimit>(TPolicy policy, ref TLimit limit)
        where TPolicy : struct, IDispatchPolicy
        where TLimit : struct, IDrainLimit
    {
        SchedulerThread loop = _loop;
        long[] counters = loop.Counters;
        int level = -1;
        while (true)
        {
            try
            {
                policy.OnDrainStart();
                while (true)
                {
                    if (Volatile.Read(ref _timersDue) != 0 && !FireDueTimers()) // the one branch the timers add per item ([T-FLAG])
                    {
                        return; // the clock threw: the context faulted ([T-CLOCK])
                    }

                    // A host's budget and end request are checked between items ([H-BUDGET], [E-LIFE]); none allows no level.
                    if (!policy.TryDequeue(_queues, limit.AllowedLevels(), out WorkItem item, out level))
                    {
                        break;
                    }

                    // The level travels in the current SynchronizationContext: current for every item, so awaits capture it. Set only
                    // when it changes: a write to the thread pays the GC's write barrier, and items in a row are often of one level.
                    if (!ReferenceEquals(SynchronizationContext.Current, _syncContexts[level]))
                    {
                        SynchronizationContext.SetSynchronizationContext(_syncContexts[level]);
                    }

                    loop.RecordRunning(in item, level); // [O-RUNNING]
                    SchedulerThread.CountDispatch(counters, level);
                    limit.OnItemStarted();
                    if (_slowPaths == SlowPaths.None) // one field read per item; every per-item diagnostic is behind it ([O-SLOW])
                    {
                        item.Invoke();
                    }
                    else
                    {
                        InvokeObserved(loop, in item, level, reuseLastEnd: true);
                    }

                    policy.OnItemEnd(level);
                }

                return;
            }
            catch (Exception ex)
            {
                _loop.LastItemEnd = 0; // the handler's time is nobody's run time
                if (!OnUnhandledException(ex, level))
                {
                    return;
                }
            }
        }
    }

    private void Park()
    {
        _loop.LastItemEnd = 0; // an idle gap is nobody's run time
        ExecutionContextFlow.Enter(null); // idle in the default context: what the last item left is not kept alive ([E-FLOW])
        for (int i = 0; i < _idleSpinCount; i++)
        {
            if (HasWorkOrShouldStop())
            {
                return;
            }

            Thread.SpinWait(20);
        }

        // [O-RUNNING]: idle, it runs nothing and keeps nothing alive. Not before the spin: a loop fed by a producer finds work there
        // again and again, and each clear costs the next item the record's reference writes.
        _loop.ClearRunning();
        Interlocked.Exchange(ref _loop.Parked, 1); // a full fence before the re-check ([P-LOOP])
        if (!HasWorkOrShouldStop())
        {
            // No longer than until the earliest timer ([T-PARK]): the loop wakes itself for it instead of waiting for the alarm.
            int timeout = ParkTimeoutMilliseconds();
            if (timeout == Timeout.Infinite)
            {
                if (!TryAdvanceVirtualClock()) // a virtual clock jumps to its earliest timer instead ([V-ADVANCE])
                {
                    _loop.Event.Wait();
                }
            }
            else if (!_loop.Event.Wait(timeout))
            {
                OnParkTimedOut();
            }
        }

        _loop.Event.Reset();
        Interlocked.Exchange(ref _loop.Parked, 0); // a full fence before the watchdog's flag is read ([O-STALL])
        WatchdogThread.Awake(_loop);
        ContextRegistry.RefreshIfListenersChanged(); // a histogram a listener enabled while it slept is seen as it wakes ([O-SLOW])
    }

    /// <summary>Park, after the parking fence and a re-check that found nothing to run: on a virtual clock, jump it to its earliest
    /// timer ([V-ADVANCE]). True if the clock moved or a timer fired (the loop goes round again); false to wait as usual.</summary>
    private bool TryAdvanceVirtualClock()
    {
        if (_virtualClock is null)
        {
            return false;
        }

        try
        {
            return _virtualClock.TryAdvanceIdle();
        }
        catch (Exception ex)
        {
            // A callback of a timer made on the clock itself threw on the loop thread: a fault, as for a clock that throws ([T-CLOCK]).
            OnClockFailed(ExceptionDispatchInfo.Capture(ex));
            return true;
        }
    }

    /// <summary>The virtual clock, from any thread, after one of its timers was armed or changed or the last hold was released: a
    /// loop waiting with nothing to jump to looks again ([V-WAKE]).</summary>
    internal void WakeForVirtualClock() => WakeForWork();

    private bool HasWorkOrShouldStop() =>
        _queues.NonEmptyMask != 0 || Volatile.Read(ref _outstanding) <= 0 || Volatile.Read(ref _timersDue) != 0;

    /// <summary>[P-LOOP]: only the producer that swaps the flag from 1 to 0 sets the event; on a context its host drives, it tells the
    /// host instead ([H-WAKE]).</summary>
    private protected override void WakeForWork()
    {
        if (Volatile.Read(ref _loop.Parked) != 0 && Interlocked.Exchange(ref _loop.Parked, 0) != 0)
        {
            CountWake();
            if (_hostWake is { } host)
            {
                WatchdogThread.Awake(_loop); // the host's loop is not idle from here, whether or not the host drains ([O-STALL])
                host.Tell();
            }
            else
            {
                _loop.Event.Set();
            }
        }
    }

    // ---- Inline decisions ----------------------------------------------------------------------------------------------------------

    /// <summary>[A-INLINE]: whether code that wants to run at <paramref name="level"/> may go on at once: on the loop thread, nothing
    /// queued above (due timers are queued first, so a due timer above runs first).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool CanRunInlineAt(int level) =>
        Thread.CurrentThread == _consumer
        && (Volatile.Read(ref _timersDue) == 0 || FireDueTimers()) // false: the clock threw, the context faulted
        && !_queues.HasWorkAbove(level); // the consumer's own look, and we are it

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal override bool TryContinueInlineAt(int level, FlowContext? flow)
    {
        if (!CanRunInlineAt(flow is null ? level : flow.EffectiveLevel)) // level code's effective level is its level ([X-FLOW])
        {
            return false;
        }

        PrioritySynchronizationContext target = flow ?? _syncContexts[level];
        if (!ReferenceEquals(SynchronizationContext.Current, target))
        {
            SynchronizationContext.SetSynchronizationContext(target);
        }

        return true;
    }

    internal override bool TryRunTaskInline(int level, Func<Task, bool> tryExecuteTask, Task task) =>
        CanRunInlineAt(WaitedLevel(level)) && InlineAt.RunTask(_syncContexts[level], tryExecuteTask, task);

    // [S-INLINE]: on the loop thread (a host's, drain or not: [H-DRAIN]), run inline at the target level (queueing and waiting would
    // deadlock).
    private protected override bool TrySendInline(PrioritySynchronizationContext target, SendOrPostCallback callback, object? state)
    {
        if (SchedulerThread.Current != _loop)
        {
            return false;
        }

        InlineAt.Run(target, callback, state);
        return true;
    }

    /// <summary>The checkpoint decision ([SLICE-FLAG], [H-BUDGET]): the fast path is the thread check and four field reads (the timers
    /// flag, the quota flag, the mask of levels above, a host's drain deadline).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal override bool ShouldYieldAt(int level) =>
        (Thread.CurrentThread != _consumer
         || Volatile.Read(ref _timersDue) != 0
         || Volatile.Read(ref _loop.SliceExpired) != 0
         || (_queues.NonEmptyMask >> level >> 1) != 0
         || _checkpointDeadline != 0)
        && ShouldYieldSlow(level);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool ShouldYieldSlow(int level)
    {
        if (Thread.CurrentThread != _consumer)
        {
            return !HasStopped; // hop onto the loop, as Prioritize does; a stopped context completes at once and GetResult throws
        }

        if (Volatile.Read(ref _timersDue) != 0 && !FireDueTimers())
        {
            return true; // the clock threw: the context faulted, and the caller must not go on
        }

        return _queues.HasWorkAbove(level) || BudgetSpentAt(level) || QuotaUsedUp(_loop);
    }

    /// <summary>[SLICE-FLAG]: on the loop any waiting work is freed by the yield; the look clears stale mask bits ([Q-MASK]).</summary>
    private protected override bool YieldFreesWaitingWork(SchedulerThread thread) => _queues.HasWaitingWork();

    // ---- Controllers (loop only) ---------------------------------------------------------------------------------------------------

    /// <summary>[D-DROP]: a controller's activation is not user work: its controller drops its own queued items, each reported
    /// ([C-CONTROLLER]).</summary>
    internal override void Drop(int level, in WorkItem item, DropReason reason)
    {
        if (item.Callback == ControllerActivation.Callback)
        {
            ((ControllerActivation)item.State!).OnDroppedByContext(reason);
            return;
        }

        base.Drop(level, item, reason);
    }

    internal void ThrowIfFinished(string operation, int level)
    {
        if (IsFinished)
        {
            throw new ObjectDisposedException(
                Name,
                $"{SubjectAtStart} has finished ({State}), so {operation} (level {level}) cannot be used any more: a controller lives only as long as the loop of its context.");
        }
    }

    // ---- Messages ------------------------------------------------------------------------------------------------------------------

    private PrioritySynchronizationContext CurrentLevelContextOf(string operation)
    {
        if (SynchronizationContext.Current is PrioritySynchronizationContext current && current.Scheduler == this)
        {
            return current;
        }

        throw SynchronizationContext.Current is PrioritySynchronizationContext { Scheduler: PriorityContext other }
            ? new InvalidOperationException(
                $"{operation} was called on {Subject} by code running in {other.Subject}. A checkpoint asks about the context the caller " +
                $"runs in: use Priority.{operation}, or hop first with context.Prioritize(level).")
            : NotInContext(
                $"context.{operation} (of {Subject})",
                $"Priority.{operation} asks about the scheduler the caller runs on, a PriorityContext or a PriorityThreadPool.");
    }

    /// <summary>A member only the loop has (<paramref name="operation"/>) was called off any <see cref="PriorityContext"/>: the message
    /// says what the caller runs on instead and, in <paramref name="elsewhere"/>, what to use elsewhere.</summary>
    internal static InvalidOperationException NotInContext(string operation, string elsewhere) =>
        new(SynchronizationContext.Current is PrioritySynchronizationContext { Scheduler: PriorityThreadPool pool } level
            ? $"{operation} can only be used inside a PriorityContext, and the calling code runs on {pool.Subject} (at level " +
              $"{level.Level}) instead. {elsewhere}"
            : $"{operation} can only be used inside a PriorityContext, and the calling code runs on neither a PriorityContext nor a " +
              $"PriorityThreadPool ({Priority.DescribeCurrentSynchronizationContext()}). Start the work with PriorityContext.Run(...) " +
              $"or on a PriorityContextThread, and use context.Prioritize(level) to hop onto it. {elsewhere}");

    private static void ThrowIfLoopRunningOnThisThread(string operation)
    {
        if (SchedulerThread.Current?.Scheduler is PriorityContext running)
        {
            throw new InvalidOperationException(running._hostWake is null
                ? $"{operation} was called on a thread that is already running the loop of {running.Subject}. " +
                  "Nesting would block the outer loop; await the work instead, or run it on a PriorityContextThread."
                : $"{operation} was called on a thread that already drives {running.Subject} for its host (attached with " +
                  "PriorityContext.AttachToCurrentThread). Nesting would block the host's loop; queue the work on the attached context " +
                  "(InvokeAsync, Prioritize), or run it on a PriorityContextThread.");
        }
    }

    /// <summary>The loop's limit: every level, every time; a constant the JIT folds away, so the loop's drain has no limit code.</summary>
    private readonly struct NoDrainLimit : IDrainLimit
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public ulong AllowedLevels() => ~0UL;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void OnItemStarted()
        {
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
                    context.ReleaseOwnerHold();
                },
                context,
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }
    }

    /// <summary>The <see cref="ExecutionContext"/> of the thread that runs the loop, as it was when the loop started: restored when the
    /// loop ends, so that the owner of <c>Run</c> gets its thread back as it lent it ([E-FLOW]), flow suppression included.</summary>
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
            // A suppressed flow hides the thread's context from Capture: lift it for the loop's lifetime, and suppress it again at
            // the end, so the owner's AsyncFlowControl.Undo still works.
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
