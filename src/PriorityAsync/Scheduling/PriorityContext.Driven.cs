using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// A context its host drives ([H-DRAIN], [H-BUDGET], [H-WAKE]): bound to a thread the host owns (a game's main thread, a UI thread), with
// no loop of its own; the host's loop calls the drain, which runs the same per-item path as the loop. It starts and ends as every
// scheduler does ([E-LIFE], [E-END]), on the host's thread.
public sealed partial class PriorityContext
{
    // Null on a context that runs its own loop; on one its host drives, how the host is told of work queued while it does not drain
    // ([H-WAKE]).
    private HostWake? _hostWake;

    // The host thread's SynchronizationContext when the context was attached, given back at the end.
    private SynchronizationContext? _hostPreviousSyncContext;

    /// <summary>
    /// Creates a context bound to the calling thread, which the caller's own loop drains (a game's frame loop, a UI message loop), and
    /// makes its <see cref="PrioritySchedulerOptions.DefaultLevel"/>'s <see cref="SynchronizationContext"/> the thread's current one:
    /// <c>await</c>s on the thread come back through the context, at the level they were at.
    /// </summary>
    /// <param name="options">The settings, or <see langword="null"/> for the defaults. The drain's budget is measured on
    /// <see cref="PrioritySchedulerOptions.TimeProvider"/>'s clock.</param>
    /// <param name="workAvailable">Called when work is queued (or a loop timer comes due, or the context can end) while the host is not
    /// draining and was not told yet: at most once per idle period, from the thread that queued the work (for a timer, a thread the
    /// library keeps for these calls, never the thread pool: a starved pool does not delay it), so that a host that waits for its own
    /// events (a UI message loop) can schedule a drain, for example by posting itself a message. It must be short, must not block and
    /// must not throw (an exception propagates to the thread that queued the work; on the library's thread, it ends the process). A
    /// frame loop that drains every frame needs none: <see langword="null"/>.</param>
    /// <returns>The driver: the host's handle to drain, complete and dispose the context, on this thread.</returns>
    /// <exception cref="ArgumentOutOfRangeException">An option is outside its allowed range.</exception>
    /// <exception cref="InvalidOperationException">The calling thread already runs or drives a priority scheduler.</exception>
    /// <remarks>See <see cref="PriorityContextDriver"/> for what a drain runs, the budget, and the end.</remarks>
    public static PriorityContextDriver AttachToCurrentThread(PriorityContextOptions? options = null, Action? workAvailable = null)
    {
        if (SchedulerThread.Current is { } running)
        {
            ThrowIfLoopRunningOnThisThread(nameof(AttachToCurrentThread));
            throw new InvalidOperationException(
                $"AttachToCurrentThread was called on a thread of {running.Scheduler.Subject}. A host's thread must be its own: attach on " +
                "the thread whose loop will drain the context (a game's main thread, a UI thread).");
        }

        var context = new PriorityContext(options);
        context.Attach(workAvailable);
        return new PriorityContextDriver(context);
    }

    /// <summary>[H-DRAIN]: starts the context ([E-LIFE]) and binds the calling thread, as the loop does, without consuming: the host
    /// consumes only while it drains. The owner's hold is the host's, released by the driver's Complete.</summary>
    private void Attach(Action? workAvailable)
    {
        _hostWake = new HostWake(workAvailable);
        _loop.Parked = 1; // idle: nothing is queued yet, and the first producer tells the host ([H-WAKE])
        Start();
        _hostPreviousSyncContext = SynchronizationContext.Current;
        _loop.Bind();
        SynchronizationContext.SetSynchronizationContext(_syncContexts[DefaultLevel]);
    }

    /// <summary>The implementation of <see cref="PriorityContextDriver"/>'s drains ([H-DRAIN]).</summary>
    /// <param name="budget">The budget, or <see cref="TimeSpan.MinValue"/> for none; converted to the clock's ticks only when there is
    /// something to do.</param>
    /// <param name="exempt">The levels that drain whatever the budget (bit L: level L).</param>
    /// <param name="operation">The caller's name, for messages.</param>
    internal PriorityDrainResult DrainForHost(TimeSpan budget, ulong exempt, string operation)
    {
        if (Volatile.Read(ref _state) >= StateCompleted)
        {
            return default; // [E-END]: a drain scheduled before the end (a UI message the wake posted) needs no guard
        }

        if (SchedulerThread.Current != _loop)
        {
            throw new InvalidOperationException(
                $"{operation} was called on thread {Environment.CurrentManagedThreadId}, and {Subject} is attached to thread {_loop.Thread!.ManagedThreadId}: " +
                "only the thread it was attached on drains it. Nothing was run. From another thread, queue work with InvokeAsync or " +
                "Post, and let the host drain it (the workAvailable callback tells the host).");
        }

        if (_consumer is not null)
        {
            throw new InvalidOperationException(
                $"{operation} was called from inside an item that a drain of {Subject} is running. A drain inside a drain would run items " +
                "inside an item; nothing was run. Return from the item (or await) and let the host's next drain run the rest.");
        }

        // [H-WAKE]: nothing queued, no timer due, no end to carry out, and the host counted idle: a few field reads.
        if (_queues.NonEmptyMask == 0
            && Volatile.Read(ref _timersDue) == 0
            && Volatile.Read(ref _loop.Parked) != 0
            && !EndRequested
            && Volatile.Read(ref _outstanding) > 0)
        {
            return default;
        }

        return DrainForHostSlow(budget < TimeSpan.Zero ? -1 : ClockTicks(budget), exempt);
    }

    private PriorityDrainResult DrainForHostSlow(long budgetTicks, ulong exempt)
    {
        Interlocked.Exchange(ref _loop.Parked, 0); // draining: a producer has nothing to tell the host ([H-WAKE]); a full fence ([O-STALL])
        WatchdogThread.Awake(_loop);
        SynchronizationContext? hostSyncContext = SynchronizationContext.Current;
        OwnerContext host = OwnerContext.Save(); // nothing an item sets reaches the host's code ([E-FLOW])
        long start = ClockNow();
        long deadline = budgetTicks < 0 ? long.MaxValue : Deadline(start, budgetTicks);
        var limit = new HostDrainLimit(this, deadline, exempt);

        // [Q-CONSUMER]: the host's thread is the consumer only while it drains, so that its posts between drains tell it ([H-WAKE]).
        BeginConsuming();
        if (budgetTicks >= 0)
        {
            _checkpointDeadline = deadline;
            _checkpointExempt = exempt;
        }

        bool mustEnd;
        bool waiting;
        try
        {
            DrainReady(ref limit);

            // [E-LIFE]: the end check, as the loop's; else the consumer's own look at what is left, which clears stale bits ([Q-MASK]).
            mustEnd = MustEnd(nothingRuns: true);
            waiting = !mustEnd && (Volatile.Read(ref _timersDue) != 0 || _queues.HasWaitingWork());
        }
        finally
        {
            _checkpointDeadline = 0;
            EndConsuming();
            _loop.LastItemEnd = 0; // the host's frame is nobody's run time
            _loop.ClearRunning(); // nor its item ([O-RUNNING])
            SynchronizationContext.SetSynchronizationContext(hostSyncContext);
            host.Restore();
        }

        TimeSpan elapsed = ClockDuration(ClockNow() - start);
        if (mustEnd)
        {
            EndForHost(); // rethrows the outcome, as Run does
            return new PriorityDrainResult(limit.ItemsRun, WorkRemains: false, BudgetSpent: false, elapsed);
        }

        if (!waiting)
        {
            Interlocked.Exchange(ref _loop.Parked, 1); // a full fence before the re-check ([H-WAKE])
            if (_queues.NonEmptyMask != 0
                || Volatile.Read(ref _timersDue) != 0
                || Volatile.Read(ref _outstanding) <= 0
                || EndRequested)
            {
                Interlocked.Exchange(ref _loop.Parked, 0); // the result tells the host: no wake-up needed; a full fence ([O-STALL])
                WatchdogThread.Awake(_loop);
                waiting = true;
            }
        }

        return new PriorityDrainResult(limit.ItemsRun, waiting, BudgetSpent: waiting && limit.Spent, elapsed);
    }

    /// <summary>Whether the host's thread is draining (it is the consumer only while a drain runs, [H-DRAIN]).</summary>
    internal bool IsDrainingForHost => Volatile.Read(ref _consumer) is not null;

    /// <summary>The deadline <paramref name="budgetTicks"/> after <paramref name="start"/>: never 0 or long.MinValue, which
    /// <see cref="_checkpointDeadline"/> reserves.</summary>
    private static long Deadline(long start, long budgetTicks)
    {
        long deadline = start > long.MaxValue - budgetTicks ? long.MaxValue - 1 : start + budgetTicks;
        return deadline is 0 or long.MinValue ? deadline + 1 : deadline;
    }

    /// <summary>[H-BUDGET]: at a checkpoint inside a drain with a budget, at a level the budget holds back, whether the deadline has
    /// passed (then the rest of the method goes to the back of its level, and the host gets its thread back).</summary>
    private bool BudgetSpentAt(int level)
    {
        long deadline = _checkpointDeadline;
        if (deadline == 0 || ((_checkpointExempt >> level) & 1) != 0)
        {
            return false;
        }

        if (deadline != long.MinValue && ClockNow() < deadline)
        {
            return false;
        }

        _checkpointDeadline = long.MinValue; // seen passed: the checkpoints after this one read no clock
        return true;
    }

    /// <summary>[E-LIFE]: <see cref="PriorityContextDriver.Dispose"/>. On the host's thread outside a drain the context ends now (and
    /// the outcome is rethrown if <paramref name="throwOutcome"/>; it is in Completion either way); elsewhere (another thread, or an item
    /// of a drain) the end is requested, and the host's drain carries it out.</summary>
    internal void EndFromHost(bool throwOutcome)
    {
        if (IsFinished)
        {
            return;
        }

        RequestEnd(); // a full fence before the wake-up reads the parked flag ([H-WAKE])
        if (SchedulerThread.Current == _loop && _consumer is null)
        {
            EndForHost(throwOutcome);
            return;
        }

        WakeForWork(); // the host's next drain ends it; a running drain stops before its next item
    }

    /// <summary><see cref="PriorityContextDriver.DisposeAsync"/>: <see cref="EndFromHost"/>, then the end to wait for, except from an item
    /// of a drain, which cannot wait for its own drain.</summary>
    internal ValueTask EndFromHostAsync()
    {
        bool insideDrain = SchedulerThread.Current == _loop && _consumer is not null;
        EndFromHost(throwOutcome: false);
        return insideDrain ? default : new ValueTask(Completion);
    }

    /// <summary>[E-END] on the host's thread, outside a drain; then rethrows the outcome as Run does, if <paramref name="throwOutcome"/>.</summary>
    private void EndForHost(bool throwOutcome = true)
    {
        Volatile.Write(ref _loop.Parked, 0); // the host is counted idle no more: no wake-up after the end
        if (SynchronizationContext.Current is PrioritySynchronizationContext current && current.Scheduler == this)
        {
            SynchronizationContext.SetSynchronizationContext(_hostPreviousSyncContext); // unless the host installed another since
        }

        ExceptionDispatchInfo? handlerFailure = End();
        if (throwOutcome)
        {
            ThrowOutcome(handlerFailure);
        }
    }

    /// <summary>[H-WAKE]: a timer's wake-up comes under the timer lock or the alarm's, where no user code may run: the host's callback
    /// is handed to the host wake thread.</summary>
    private protected override void WakeForTimers()
    {
        if (_hostWake is not { } host)
        {
            WakeForWork();
            return;
        }

        if (Volatile.Read(ref _loop.Parked) != 0 && Interlocked.Exchange(ref _loop.Parked, 0) != 0)
        {
            CountWake();
            WatchdogThread.Awake(_loop); // [O-STALL]
            host.TellLater();
        }
    }

    /// <summary>
    /// The host's callback ([H-WAKE]). A wake-up that comes under a lock is told from one process-wide thread of its own: not the
    /// thread pool, which a starved pool would delay, and not the alarm thread, which a slow callback would hold up for every
    /// scheduler's timers.
    /// </summary>
    private sealed class HostWake(Action? callback)
    {
        private static readonly object s_lock = new();
        private static readonly Queue<HostWake> s_pending = new();
        private static Thread? s_thread;

        public void Tell() => callback?.Invoke();

        /// <summary>Called under the timer lock or the alarm's: takes only its own lock, which is taken under no other.</summary>
        public void TellLater()
        {
            if (callback is null)
            {
                return;
            }

            lock (s_lock)
            {
                s_pending.Enqueue(this);
                if (s_thread is null)
                {
                    using (ExecutionContext.SuppressFlow()) // not captured: the thread outlives whatever code first needed it
                    {
                        s_thread = new Thread(TellPending) { IsBackground = true, Name = "PriorityAsync host wake" };
                        s_thread.Start();
                    }
                }

                Monitor.Pulse(s_lock);
            }
        }

        // An exception a callback throws ends the process, as on any thread: the callback must not throw (AttachToCurrentThread).
        private static void TellPending()
        {
            while (true)
            {
                HostWake next;
                lock (s_lock)
                {
                    while (s_pending.Count == 0)
                    {
                        Monitor.Wait(s_lock);
                    }

                    next = s_pending.Dequeue();
                }

                next.Tell();
            }
        }
    }

    /// <summary>A host's drain ([H-BUDGET], [E-LIFE]): before each item, an end request stops it; a budget spent leaves only the exempt
    /// levels. The clock is read once per item while the budget lasts, none without one.</summary>
    private struct HostDrainLimit(PriorityContext context, long deadline, ulong exempt) : IDrainLimit
    {
        public int ItemsRun;

        public bool Spent;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public ulong AllowedLevels()
        {
            if (context.EndRequested)
            {
                return 0;
            }

            if (!Spent && (deadline == long.MaxValue || context.ClockNow() < deadline))
            {
                return ~0UL;
            }

            Spent = true;
            return exempt;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void OnItemStarted() => ItemsRun++;
    }
}
