using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Tracing;

namespace PriorityAsync.Internal;

/// <summary>
/// The <c>PriorityAsync</c> event source: a start and a stop event around every work item (keyword <c>Items</c>), a warning for every
/// faulted piece of work, dropped item, escaped exception and stall (no keyword: every session gets them), and the inspector's
/// sampled state (keyword <c>Inspector</c>), for the inspector tool, <c>dotnet-trace</c>, PerfView and in-process
/// <see cref="EventListener"/>s. Off (and free) until a session enables it. The schema (ids, payloads, versions) is documented in
/// docs/inspector.md; a payload only ever grows at its end, with the event's version raised.
/// </summary>
[EventSource(Name = "PriorityAsync")]
internal sealed class PriorityEventSource : EventSource
{
    /// <summary>The version of the inspector's schema (events 6 to 12 and the fields added to 5), sent in <see cref="SchedulerInfo"/>:
    /// 2 since <see cref="ThreadState"/> names every running item and carries how long a reported stall has lasted.</summary>
    public const int SchemaVersion = 2;

    public static readonly PriorityEventSource Log = new();

    private static volatile bool s_isOn;
    private static volatile bool s_itemsOn;
    private static volatile bool s_inspectorOn;

    private PriorityEventSource()
    {
    }

    /// <summary>Whether any session enables the source (the warnings). Set from OnEventCommand, which may run before <see cref="Log"/>
    /// is assigned.</summary>
    public static bool IsOn => s_isOn;

    /// <summary>Whether a session asks for the per-item start and stop events (keyword <c>Items</c>, or no keyword at all).</summary>
    public static bool ItemsOn => s_itemsOn;

    /// <summary>Whether a session asks for the inspector's sampled state (keyword <c>Inspector</c>, or no keyword at all).</summary>
    public static bool InspectorOn => s_inspectorOn;

    /// <summary>The source's keywords. An event with no keyword goes to every session that enables the source at its level.</summary>
    public static class Keywords
    {
        /// <summary>A start and a stop event around every item: exact, and costly at high item rates.</summary>
        public const EventKeywords Items = (EventKeywords)0x1;

        /// <summary>The inspector's sampled state: schedulers, levels, threads, and the items the sampler observes.</summary>
        public const EventKeywords Inspector = (EventKeywords)0x2;
    }

    /// <summary>A scheduler thread starts a work item.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    /// <param name="method">The callback's target, as <c>Type.Method</c> (an async method's continuation names the async method).</param>
    [Event(1, Level = EventLevel.Informational, Keywords = Keywords.Items, Message = "{0}: level {1} starts {2}")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkItemStart(string context, int level, string method)
    {
        fixed (char* contextChars = context)
        fixed (char* methodChars = method)
        {
            EventData* data = stackalloc EventData[3];
            data[0] = new EventData { DataPointer = (nint)contextChars, Size = (context.Length + 1) * sizeof(char) };
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = new EventData { DataPointer = (nint)methodChars, Size = (method.Length + 1) * sizeof(char) };
            WriteEventCore(1, 3, data);
        }
    }

    /// <summary>A scheduler thread finished a work item (it returned, threw, or reached an await that did not complete at once).</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    [Event(2, Level = EventLevel.Informational, Keywords = Keywords.Items, Message = "{0}: level {1} done")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkItemStop(string context, int level)
    {
        fixed (char* contextChars = context)
        {
            EventData* data = stackalloc EventData[2];
            data[0] = new EventData { DataPointer = (nint)contextChars, Size = (context.Length + 1) * sizeof(char) };
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            WriteEventCore(2, 2, data);
        }
    }

    /// <summary>Work started with a delegate (InvokeAsync, a controller's Run, a scope's child) ended with an exception.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The work's level.</param>
    /// <param name="kind">How the work was started.</param>
    /// <param name="method">The work, as <c>Type.Method</c>.</param>
    /// <param name="exceptionType">The exception's full type name.</param>
    /// <param name="exceptionMessage">The exception's message.</param>
    [Event(3, Level = EventLevel.Warning, Message = "{0}: {2} {3} at level {1} faulted with {4}: {5}")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkFaulted(string context, int level, string kind, string method, string exceptionType, string exceptionMessage)
    {
        fixed (char* contextChars = context)
        fixed (char* kindChars = kind)
        fixed (char* methodChars = method)
        fixed (char* typeChars = exceptionType)
        fixed (char* messageChars = exceptionMessage)
        {
            EventData* data = stackalloc EventData[6];
            data[0] = String(contextChars, context);
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = String(kindChars, kind);
            data[3] = String(methodChars, method);
            data[4] = String(typeChars, exceptionType);
            data[5] = String(messageChars, exceptionMessage);
            WriteEventCore(3, 6, data);
        }
    }

    /// <summary>An item will never run (see <see cref="PriorityScheduler.WorkDropped"/>); written on the thread that dropped it.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    /// <param name="reason">Why, in snake case (<c>posted_after_completion</c>, <c>abandoned_after_fault</c>, <c>cancelled</c>,
    /// <c>timer_armed_at_finish</c>).</param>
    /// <param name="method">The code the item would have run, as <c>Type.Method</c>.</param>
    [Event(4, Level = EventLevel.Warning, Message = "{0}: level {1} dropped {3} ({2})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and an int are written; nothing to trim.")]
    public unsafe void WorkDropped(string context, int level, string reason, string method)
    {
        fixed (char* contextChars = context)
        fixed (char* reasonChars = reason)
        fixed (char* methodChars = method)
        {
            EventData* data = stackalloc EventData[4];
            data[0] = String(contextChars, context);
            data[1] = new EventData { DataPointer = (nint)(&level), Size = sizeof(int) };
            data[2] = String(reasonChars, reason);
            data[3] = String(methodChars, method);
            WriteEventCore(4, 4, data);
        }
    }

    /// <summary>The stall watchdog found the loop (or a pool thread) starting no item for at least the stall timeout while work waited.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The highest level with waiting work.</param>
    /// <param name="waitingForMilliseconds">How long work has been waiting without the loop starting any item.</param>
    /// <param name="pendingCount">The number of waiting items (due timers included).</param>
    /// <param name="schedulerId">Version 1: the scheduler's id in this process (as in <see cref="SchedulerInfo"/>).</param>
    /// <param name="thread">Version 1: the stalled pool thread's index; 0 for a single loop.</param>
    /// <param name="blockingMethod">Version 1: the item that blocks, as <c>Type.Method</c>, when an inspector session saw it start;
    /// else empty.</param>
    /// <param name="blockingForMilliseconds">Version 1: how long that item has run, or -1 when it is not known.</param>
    [Event(5, Level = EventLevel.Warning, Version = 1, Message = "{0}: the loop has started no item for {2} ms while {3} items wait (highest level {1})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void StallDetected(string context, int level, long waitingForMilliseconds, int pendingCount, int schedulerId, int thread, string blockingMethod, double blockingForMilliseconds)
    {
        fixed (char* contextChars = context)
        fixed (char* methodChars = blockingMethod)
        {
            EventData* data = stackalloc EventData[8];
            data[0] = String(contextChars, context);
            data[1] = Value(&level);
            data[2] = Value(&waitingForMilliseconds);
            data[3] = Value(&pendingCount);
            data[4] = Value(&schedulerId);
            data[5] = Value(&thread);
            data[6] = String(methodChars, blockingMethod);
            data[7] = Value(&blockingForMilliseconds);
            WriteEventCore(5, 8, data);
        }
    }

    /// <summary>Inspector: a running scheduler, once when the session starts (or the scheduler does), then every few seconds.</summary>
    /// <param name="schemaVersion"><see cref="SchemaVersion"/>.</param>
    /// <param name="schedulerId">The scheduler's id in this process (names need not be unique).</param>
    /// <param name="scheduler">The scheduler's name.</param>
    /// <param name="kind"><c>PriorityContext</c> or <c>PriorityThreadPool</c>.</param>
    /// <param name="levels">Its number of levels.</param>
    /// <param name="threads">Its number of threads (1 for a single loop).</param>
    /// <param name="policy">Its policy (<c>Strict</c>, <c>Aging(...)</c>, <c>WeightedShares(...)</c>).</param>
    /// <param name="timeSliceMilliseconds">Its time slice, or -1 when off.</param>
    /// <param name="stallTimeoutMilliseconds">Its stall timeout, or -1 when off.</param>
    /// <param name="samplePeriodMilliseconds">The sampler's period.</param>
    [Event(6, Level = EventLevel.Informational, Keywords = Keywords.Inspector, Message = "{2} ({3}, id {1}): {4} levels, {5} threads, {6}")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void SchedulerInfo(int schemaVersion, int schedulerId, string scheduler, string kind, int levels, int threads, string policy, double timeSliceMilliseconds, double stallTimeoutMilliseconds, int samplePeriodMilliseconds)
    {
        fixed (char* schedulerChars = scheduler)
        fixed (char* kindChars = kind)
        fixed (char* policyChars = policy)
        {
            EventData* data = stackalloc EventData[10];
            data[0] = Value(&schemaVersion);
            data[1] = Value(&schedulerId);
            data[2] = String(schedulerChars, scheduler);
            data[3] = String(kindChars, kind);
            data[4] = Value(&levels);
            data[5] = Value(&threads);
            data[6] = String(policyChars, policy);
            data[7] = Value(&timeSliceMilliseconds);
            data[8] = Value(&stallTimeoutMilliseconds);
            data[9] = Value(&samplePeriodMilliseconds);
            WriteEventCore(6, 10, data);
        }
    }

    /// <summary>Inspector: a scheduler ended (its loop returned, or the pool's last thread ended).</summary>
    /// <param name="schedulerId">The scheduler's id.</param>
    /// <param name="scheduler">The scheduler's name.</param>
    [Event(7, Level = EventLevel.Informational, Keywords = Keywords.Inspector, Message = "{1} (id {0}) ended")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void SchedulerStopped(int schedulerId, string scheduler)
    {
        fixed (char* schedulerChars = scheduler)
        {
            EventData* data = stackalloc EventData[2];
            data[0] = Value(&schedulerId);
            data[1] = String(schedulerChars, scheduler);
            WriteEventCore(7, 2, data);
        }
    }

    /// <summary>Inspector, once per sample period: the scheduler as a whole.</summary>
    /// <param name="schedulerId">The scheduler's id.</param>
    /// <param name="allItems">1 while every item is observed (<see cref="ItemRun"/> for each), 0 while one item per period is.</param>
    /// <param name="armedTimers">Loop timers and <c>Priority.Delay</c>s armed now.</param>
    [Event(8, Level = EventLevel.Informational, Keywords = Keywords.Inspector, Message = "id {0}: every item observed {1}, {2} timers armed")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only numbers are written; nothing to trim.")]
    public unsafe void SchedulerState(int schedulerId, int allItems, int armedTimers)
    {
        EventData* data = stackalloc EventData[3];
        data[0] = Value(&schedulerId);
        data[1] = Value(&allItems);
        data[2] = Value(&armedTimers);
        WriteEventCore(8, 3, data);
    }

    /// <summary>Inspector, once per sample period and level.</summary>
    /// <param name="schedulerId">The scheduler's id.</param>
    /// <param name="level">The level.</param>
    /// <param name="queued">Items queued and not yet started.</param>
    /// <param name="started">Items started since the scheduler started (a counter: rates are its differences).</param>
    /// <param name="running">Items running now (a pool; -1 for a single loop, which runs one at most).</param>
    [Event(9, Level = EventLevel.Informational, Keywords = Keywords.Inspector, Message = "id {0} level {1}: {2} queued, {3} started, {4} running")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only numbers are written; nothing to trim.")]
    public unsafe void LevelState(int schedulerId, int level, int queued, long started, int running)
    {
        EventData* data = stackalloc EventData[5];
        data[0] = Value(&schedulerId);
        data[1] = Value(&level);
        data[2] = Value(&queued);
        data[3] = Value(&started);
        data[4] = Value(&running);
        WriteEventCore(9, 5, data);
    }

    /// <summary>Inspector, once per sample period and thread: what the thread does now.</summary>
    /// <param name="schedulerId">The scheduler's id.</param>
    /// <param name="thread">The thread's index (0 for a single loop).</param>
    /// <param name="dispatched">Items the thread has started since it started.</param>
    /// <param name="state">0 idle (parked), 1 running an item, 2 running an item that is blocked in a synchronous wait.</param>
    /// <param name="level">The running item's level, or -1 when the thread runs none.</param>
    /// <param name="method">The running item, as <c>Type.Method</c> (from the thread's own record of it, [O-RUNNING]), or empty.</param>
    /// <param name="runningForMilliseconds">How long it has run: exact when <paramref name="exact"/> is 1, else a lower bound (the
    /// time since the sampler, or the stall watchdog before it, first saw the thread on this item).</param>
    /// <param name="exact">1 when <paramref name="runningForMilliseconds"/> comes from the item's own start (the session saw it start).</param>
    /// <param name="stalledForMilliseconds">Version 1: how long the thread has been stalled, when its watchdog reported a stall that
    /// still lasts (no item started while work waits); -1 otherwise.</param>
    [Event(10, Level = EventLevel.Informational, Keywords = Keywords.Inspector, Version = 1, Message = "id {0} thread {1}: state {3}, {5} for {6} ms")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void ThreadState(int schedulerId, int thread, long dispatched, int state, int level, string method, double runningForMilliseconds, int exact, double stalledForMilliseconds)
    {
        fixed (char* methodChars = method)
        {
            EventData* data = stackalloc EventData[9];
            data[0] = Value(&schedulerId);
            data[1] = Value(&thread);
            data[2] = Value(&dispatched);
            data[3] = Value(&state);
            data[4] = Value(&level);
            data[5] = String(methodChars, method);
            data[6] = Value(&runningForMilliseconds);
            data[7] = Value(&exact);
            data[8] = Value(&stalledForMilliseconds);
            WriteEventCore(10, 9, data);
        }
    }

    /// <summary>Inspector: an observed item ended (returned, threw, or reached an await that did not complete at once).</summary>
    /// <param name="schedulerId">The scheduler's id.</param>
    /// <param name="thread">The thread's index (0 for a single loop).</param>
    /// <param name="level">The item's level.</param>
    /// <param name="method">The item, as <c>Type.Method</c> (an async method's continuation names the async method).</param>
    /// <param name="runMilliseconds">How long it ran.</param>
    /// <param name="waitMilliseconds">How long it waited in its queue, or -1 when it was queued before the session observed every item.</param>
    /// <param name="timerLateMilliseconds">For a loop timer's firing: how long after its due time it started; else -1.</param>
    /// <param name="sampled">1 when the item was the period's one sample (the scheduler's item rate was high), 0 when every item is observed.</param>
    [Event(11, Level = EventLevel.Informational, Keywords = Keywords.Inspector, Message = "id {0} thread {1} level {2}: {3} ran {4} ms")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void ItemRun(int schedulerId, int thread, int level, string method, double runMilliseconds, double waitMilliseconds, double timerLateMilliseconds, int sampled)
    {
        fixed (char* methodChars = method)
        {
            EventData* data = stackalloc EventData[8];
            data[0] = Value(&schedulerId);
            data[1] = Value(&thread);
            data[2] = Value(&level);
            data[3] = String(methodChars, method);
            data[4] = Value(&runMilliseconds);
            data[5] = Value(&waitMilliseconds);
            data[6] = Value(&timerLateMilliseconds);
            data[7] = Value(&sampled);
            WriteEventCore(11, 8, data);
        }
    }

    /// <summary>An exception escaped an item (typically an <c>async void</c> method): see <c>UnhandledException</c>.</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="level">The item's level.</param>
    /// <param name="exceptionType">The exception's full type name.</param>
    /// <param name="exceptionMessage">The exception's message.</param>
    /// <param name="handled">1 when a handler marked it handled (the scheduler goes on), 0 when the scheduler faulted.</param>
    [Event(12, Level = EventLevel.Warning, Message = "{0}: an exception escaped an item at level {1}: {2}: {3} (handled {4})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void ExceptionEscaped(string context, int level, string exceptionType, string exceptionMessage, int handled)
    {
        fixed (char* contextChars = context)
        fixed (char* typeChars = exceptionType)
        fixed (char* messageChars = exceptionMessage)
        {
            EventData* data = stackalloc EventData[5];
            data[0] = String(contextChars, context);
            data[1] = Value(&level);
            data[2] = String(typeChars, exceptionType);
            data[3] = String(messageChars, exceptionMessage);
            data[4] = Value(&handled);
            WriteEventCore(12, 5, data);
        }
    }

    /// <summary>Work was raised above its own level ([X-SEEN]): more urgent code waits on it. Written after the raise, on the thread that
    /// made it (the waiter's).</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="work">The raised work (<c>InvokeAsync Type.Method</c>, <c>TaskScope child ...</c>, <c>PriorityLock 'x' region</c>, a controller).</param>
    /// <param name="fromLevel">Its own level.</param>
    /// <param name="toLevel">The level it runs at now.</param>
    /// <param name="cause"><c>join</c>, <c>lock</c> or <c>owner</c>.</param>
    /// <param name="by">Who waits: the waiting code's work and level, or the owner that was raised.</param>
    /// <param name="schedulerId">The scheduler's id in this process (as in <see cref="SchedulerInfo"/>).</param>
    [Event(13, Level = EventLevel.Informational, Message = "{0}: {1} raised from level {2} to {3} ({4}: {5})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void EscalationStarted(string context, string work, int fromLevel, int toLevel, string cause, string by, int schedulerId)
    {
        fixed (char* contextChars = context)
        fixed (char* workChars = work)
        fixed (char* causeChars = cause)
        fixed (char* byChars = by)
        {
            EventData* data = stackalloc EventData[7];
            data[0] = String(contextChars, context);
            data[1] = String(workChars, work);
            data[2] = Value(&fromLevel);
            data[3] = Value(&toLevel);
            data[4] = String(causeChars, cause);
            data[5] = String(byChars, by);
            data[6] = Value(&schedulerId);
            WriteEventCore(13, 7, data);
        }
    }

    /// <summary>Raised work dropped back to its own level (what waited on it has stopped waiting: its task completed, the lock was
    /// released, the wait was cancelled).</summary>
    /// <param name="context">The scheduler's name.</param>
    /// <param name="work">The work, as in <see cref="EscalationStarted"/>.</param>
    /// <param name="fromLevel">Its own level.</param>
    /// <param name="toLevel">The highest level it was raised to.</param>
    /// <param name="raisedForMilliseconds">How long it stayed raised.</param>
    /// <param name="schedulerId">The scheduler's id in this process.</param>
    [Event(14, Level = EventLevel.Informational, Message = "{0}: {1} back at level {2} after {4} ms at level {3}")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void EscalationEnded(string context, string work, int fromLevel, int toLevel, double raisedForMilliseconds, int schedulerId)
    {
        fixed (char* contextChars = context)
        fixed (char* workChars = work)
        {
            EventData* data = stackalloc EventData[6];
            data[0] = String(contextChars, context);
            data[1] = String(workChars, work);
            data[2] = Value(&fromLevel);
            data[3] = Value(&toLevel);
            data[4] = Value(&raisedForMilliseconds);
            data[5] = Value(&schedulerId);
            WriteEventCore(14, 6, data);
        }
    }

    /// <summary>Code has waited on a priority lock for its scheduler's stall timeout and still waits ([X-SEEN]): its holders run elsewhere
    /// (off its scheduler), so nothing could raise them, or they were raised and still hold it (blocked, or a long critical section).</summary>
    /// <param name="context">The waiter's scheduler.</param>
    /// <param name="level">The waiter's level.</param>
    /// <param name="lockName">The lock, as messages name it.</param>
    /// <param name="waitedMilliseconds">How long it has waited.</param>
    /// <param name="holders">Who holds it.</param>
    /// <param name="holderRaised">1 if the holders were raised, 0 if none could be.</param>
    /// <param name="schedulerId">The scheduler's id in this process.</param>
    [Event(15, Level = EventLevel.Warning, Message = "{0}: code at level {1} has waited {3} ms for {2}, held by {4} (raised: {5})")]
    [UnconditionalSuppressMessage("ReflectionAnalysis", "IL2026", Justification = "Only strings and numbers are written; nothing to trim.")]
    public unsafe void LockWaitLong(string context, int level, string lockName, double waitedMilliseconds, string holders, int holderRaised, int schedulerId)
    {
        fixed (char* contextChars = context)
        fixed (char* lockChars = lockName)
        fixed (char* holdersChars = holders)
        {
            EventData* data = stackalloc EventData[7];
            data[0] = String(contextChars, context);
            data[1] = Value(&level);
            data[2] = String(lockChars, lockName);
            data[3] = Value(&waitedMilliseconds);
            data[4] = String(holdersChars, holders);
            data[5] = Value(&holderRaised);
            data[6] = Value(&schedulerId);
            WriteEventCore(15, 7, data);
        }
    }

    protected override void OnEventCommand(EventCommandEventArgs command)
    {
        s_isOn = IsEnabled();
        s_itemsOn = IsEnabled(EventLevel.Informational, Keywords.Items);
        s_inspectorOn = IsEnabled(EventLevel.Informational, Keywords.Inspector);
        if (command.Command == EventCommand.Enable && command.Arguments is { } arguments)
        {
            InspectorSampler.Configure(arguments);
        }

        InspectorSampler.Update(s_inspectorOn);
        ContextRegistry.Refresh();
    }

    private static unsafe EventData String(char* chars, string value) =>
        new() { DataPointer = (nint)chars, Size = (value.Length + 1) * sizeof(char) };

    private static unsafe EventData Value(int* value) => new() { DataPointer = (nint)value, Size = sizeof(int) };

    private static unsafe EventData Value(long* value) => new() { DataPointer = (nint)value, Size = sizeof(long) };

    private static unsafe EventData Value(double* value) => new() { DataPointer = (nint)value, Size = sizeof(double) };
}
