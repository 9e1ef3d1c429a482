using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Threading;

namespace PriorityAsync.Inspector;

/// <summary>
/// Everything the inspector learnt from the <c>PriorityAsync</c> event source, fed one event at a time by the stream reader, and turned
/// into a <see cref="Snapshot"/> on demand. Time is the events' own (milliseconds since the session started), so a replayed recording
/// gives the snapshot the live session gave.
/// </summary>
/// <remarks>One writer (the reader thread) and any number of snapshot takers: every member takes the one lock.</remarks>
internal sealed class InspectorModel
{
    public const int SnapshotSchema = 2; // 2: schedulers[].escalations

    private readonly Lock _lock = new();
    private readonly Dictionary<int, SchedulerModel> _schedulers = [];
    private readonly List<InspectorEvent> _events = [];
    private readonly Dictionary<string, Warning> _warnings = [];
    private readonly List<string> _warningOrder = [];
    private double _nowMs;
    private long _eventCount;
    private long _lostEvents;

    public InspectorModel(double windowSeconds = 10)
    {
        if (windowSeconds is <= 0 or > 3600)
        {
            throw new ArgumentOutOfRangeException(nameof(windowSeconds), windowSeconds, "The window must be between 0 and 3600 seconds.");
        }

        WindowMs = windowSeconds * 1000;
    }

    public double WindowMs { get; }

    public int ProcessId { get; set; }

    public string ProcessName { get; set; } = string.Empty;

    /// <summary>Raised (on the reader thread, outside the lock) after each event: tests wait on it, the view does not need it.</summary>
    public event Action? Changed;

    /// <summary>Events read so far.</summary>
    public long EventCount
    {
        get
        {
            lock (_lock)
            {
                return _eventCount;
            }
        }
    }

    /// <summary>Whether any scheduler was seen.</summary>
    public bool HasSchedulers
    {
        get
        {
            lock (_lock)
            {
                return _schedulers.Count > 0;
            }
        }
    }

    public void AddLostEvents(long count)
    {
        lock (_lock)
        {
            _lostEvents += count;
        }
    }

    /// <summary>Takes one event of the <c>PriorityAsync</c> source.</summary>
    public void OnEvent(string name, double timeMs, IPayload payload)
    {
        lock (_lock)
        {
            _eventCount++;
            _nowMs = Math.Max(_nowMs, timeMs);
            switch (name)
            {
                case "SchedulerInfo":
                    OnSchedulerInfo(payload);
                    break;
                case "SchedulerStopped":
                    if (_schedulers.TryGetValue(payload.Int("schedulerId"), out SchedulerModel? stopped))
                    {
                        stopped.Running = false;
                        stopped.Escalations.Clear(); // nothing it runs is raised any longer
                    }

                    break;
                case "SchedulerState":
                    if (Scheduler(payload) is { } state)
                    {
                        state.AllItems = payload.Int("allItems") != 0;
                        state.ArmedTimers = payload.Int("armedTimers");
                    }

                    break;
                case "LevelState":
                    if (Scheduler(payload) is { } levels)
                    {
                        int level = payload.Int("level");
                        levels.OnLevelState(timeMs, level, payload.Int("queued"), payload.Long("started"), payload.Int("running"));
                        if (level == levels.LevelCount - 1)
                        {
                            levels.CheckStarvation(timeMs, this); // once per sample, after its last level
                        }
                    }

                    break;
                case "ThreadState":
                    OnThreadState(timeMs, payload);
                    break;
                case "ItemRun":
                    OnItemRun(timeMs, payload);
                    break;
                case "WorkFaulted":
                    AddEvent(timeMs, "fault", payload.String("context"), payload.Int("level"), payload.String("method"),
                        $"{payload.String("kind")} faulted with {payload.String("exceptionType")}: {payload.String("exceptionMessage")}");
                    break;
                case "WorkDropped":
                    AddEvent(timeMs, "drop", payload.String("context"), payload.Int("level"), payload.String("method"), $"dropped ({payload.String("reason")})");
                    break;
                case "ExceptionEscaped":
                    AddEvent(timeMs, "exception", payload.String("context"), payload.Int("level"), string.Empty,
                        $"{payload.String("exceptionType")}: {payload.String("exceptionMessage")} ({(payload.Int("handled") != 0 ? "handled" : "unhandled: the scheduler faulted")})");
                    break;
                case "StallDetected":
                    OnStall(timeMs, payload);
                    break;
                case "EscalationStarted":
                    Scheduler(payload)?.Escalations.Started(timeMs, payload.String("work"), payload.Int("fromLevel"), payload.Int("toLevel"), payload.String("cause"), payload.String("by"));
                    break;
                case "EscalationEnded":
                    Scheduler(payload)?.OnEscalationEnded(timeMs, payload.String("work"), payload.Int("fromLevel"), payload.Int("toLevel"), payload.Double("raisedForMilliseconds"));
                    break;
                case "LockWaitLong":
                    OnLockWaitLong(timeMs, payload);
                    break;
            }
        }

        Changed?.Invoke();
    }

    /// <summary>Takes a snapshot of what is known now.</summary>
    public Snapshot TakeSnapshot()
    {
        lock (_lock)
        {
            var schedulers = _schedulers.Values.OrderBy(s => s.Id).Select(s => s.ToSnapshot(_nowMs, WindowMs)).ToList();
            return new Snapshot(
                SnapshotSchema,
                ProcessId,
                ProcessName,
                Math.Round(_nowMs / 1000, 3),
                WindowMs / 1000,
                schedulers,
                [.. _events],
                _warningOrder.Select(key => _warnings[key]).ToList(),
                _lostEvents);
        }
    }

    private SchedulerModel? Scheduler(IPayload payload) =>
        _schedulers.TryGetValue(payload.Int("schedulerId"), out SchedulerModel? scheduler) ? scheduler : null;

    private void OnSchedulerInfo(IPayload payload)
    {
        int id = payload.Int("schedulerId");
        if (!_schedulers.TryGetValue(id, out SchedulerModel? scheduler))
        {
            scheduler = new SchedulerModel(id);
            _schedulers.Add(id, scheduler);
        }

        scheduler.Name = payload.String("scheduler");
        scheduler.Kind = payload.String("kind");
        scheduler.SetShape(payload.Int("levels"), payload.Int("threads"));
        scheduler.Policy = payload.String("policy");
        scheduler.TimeSliceMs = Positive(payload.Double("timeSliceMilliseconds"));
        scheduler.StallTimeoutMs = Positive(payload.Double("stallTimeoutMilliseconds"));
        scheduler.SamplePeriodMs = payload.Int("samplePeriodMilliseconds");
        scheduler.Running = true;
    }

    private void OnThreadState(double timeMs, IPayload payload)
    {
        if (Scheduler(payload) is not { } scheduler)
        {
            return;
        }

        int thread = payload.Int("thread");
        ThreadModel state = scheduler.Thread(thread);
        state.Dispatched = payload.Long("dispatched");
        state.State = payload.Int("state");
        state.Level = payload.Int("level");
        state.Method = payload.String("method");
        state.RunningForMs = payload.Double("runningForMilliseconds");
        state.Exact = payload.Int("exact") != 0;
        state.AtMs = timeMs;
        double stalledFor = payload.Has("stalledForMilliseconds") ? payload.Double("stalledForMilliseconds") : -1;
        string who = scheduler.Kind == "PriorityThreadPool" ? $"pool thread #{thread}" : "the loop thread";
        string what = state.Method.Length > 0 ? state.Method : "an item it does not name (a library older than the inspector)";
        string running = (state.Exact ? string.Empty : "at least ") + Ms(state.RunningForMs);

        // Blocked in a synchronous wait (Wait, Result, a lock) for a good while: the thread is lost to the scheduler meanwhile.
        double threshold = Math.Max(500, Math.Min(scheduler.StallTimeoutMs ?? 1000, 1000));
        if (state.State == 2 && state.RunningForMs >= threshold)
        {
            AddWarning(
                timeMs,
                "blocked-thread",
                scheduler.Name,
                state.Level,
                state.Method.Length > 0 ? state.Method : null,
                state.RunningForMs,
                $"{scheduler.Name}: {who} is blocked in a synchronous wait in {what} (running {running}).",
                "A .Wait(), .Result or GetAwaiter().GetResult() holds the thread; the scheduler has one thread fewer (a loop: none). Await the task instead.");
        }

        // Running (not blocked: that is the warning above) past the slice: it computes without a checkpoint.
        if (scheduler.TimeSliceMs is { } slice && state.State == 1 && state.RunningForMs > slice && state.Method.Length > 0)
        {
            TimeSliceWarning(timeMs, scheduler, state.Level, state.Method, state.RunningForMs, running: true, exact: state.Exact);
        }

        // A stall the watchdog reported and that still lasts: seen here whether or not the report came while the session listened.
        if (stalledFor >= 0)
        {
            OnStallingThread(timeMs, scheduler, thread, state, stalledFor, who, what, running);
        }
        else
        {
            state.StallStartMs = null;
        }
    }

    /// <summary>A thread the target's watchdog reports stalled, still: a <c>stall</c> warning (and event, once per stall), so that a
    /// loop stuck before the session began is reported as one stuck after it is.</summary>
    private void OnStallingThread(double timeMs, SchedulerModel scheduler, int thread, ThreadModel state, double stalledFor, string who, string what, string running)
    {
        (int pending, int highest) = scheduler.Waiting();
        int level = highest >= 0 ? highest : state.Level;
        string waiting = pending > 0 ? $"{pending} item(s) wait (highest level {highest})" : "a due timer waits";
        string subject = scheduler.Kind == "PriorityThreadPool" ? $"thread #{thread} of {scheduler.Name}" : scheduler.Name;
        string blocker = $"{(state.State == 2 ? "blocked in" : "running")} {what} (running {running})";
        double stallStart = timeMs - stalledFor;
        if (state.StallStartMs is not { } known || !scheduler.SameStall(known, stallStart))
        {
            state.StallStartMs = stallStart; // a stall not reported to this session yet: one event for it
            AddEvent(timeMs, "stall", scheduler.Name, level, state.Method, $"{subject}: no item started for {Ms(stalledFor)} while {waiting}; {blocker}");
        }

        AddWarning(
            timeMs,
            "stall",
            scheduler.Name,
            level,
            state.Method.Length > 0 ? state.Method : null,
            stalledFor,
            $"{subject} stalled: no item started for {Ms(stalledFor)} while {waiting}; {blocker}.",
            "The running item blocks: typically a .Wait(), .Result or GetAwaiter().GetResult() on work that needs this scheduler. Await it instead.");
    }

    private void OnItemRun(double timeMs, IPayload payload)
    {
        if (Scheduler(payload) is not { } scheduler)
        {
            return;
        }

        int level = payload.Int("level");
        string method = payload.String("method");
        double run = payload.Double("runMilliseconds");
        double wait = payload.Double("waitMilliseconds");
        double late = payload.Double("timerLateMilliseconds");
        bool sampled = payload.Int("sampled") != 0;
        scheduler.OnItem(timeMs, level, method, run, wait, sampled);

        // The item the thread's last sample described has ended (this one is it, or came after it): until the next sample the
        // thread is between items, not still on it.
        if (payload.Has("thread") && scheduler.Thread(payload.Int("thread")) is { State: >= 1 } thread && thread.AtMs <= timeMs)
        {
            thread.EndOfSampledItem(timeMs);
        }

        double sliceThreshold = scheduler.TimeSliceMs ?? 100;
        if (run > sliceThreshold)
        {
            TimeSliceWarning(timeMs, scheduler, level, method, run, running: false);
        }

        if (late >= 0)
        {
            double lateThreshold = Math.Max(20, scheduler.TimeSliceMs ?? 0);
            if (late > lateThreshold)
            {
                scheduler.LastLateTimer = (method, level, late, timeMs);
                AddWarning(
                    timeMs,
                    "late-timer",
                    scheduler.Name,
                    level,
                    method,
                    late,
                    $"{scheduler.Name}: loop timer {method} at level {level} fired {Ms(late)} late.",
                    "Items are never pre-empted: it waited for the running item (and anything queued above its level). Give the timer a higher level, or cut long items with await Priority.Checkpoint().");
            }
        }
    }

    /// <summary>A lock waiter reported at its scheduler's stall timeout ([X-SEEN] in docs/design.md): a <c>long-lock-wait</c> warning, one
    /// per scheduler, level and lock, counted.</summary>
    private void OnLockWaitLong(double timeMs, IPayload payload)
    {
        string name = payload.String("context");
        int level = payload.Int("level");
        string lockName = payload.String("lockName");
        double waited = payload.Double("waitedMilliseconds");
        string holders = payload.String("holders");
        bool raised = payload.Int("holderRaised") != 0;
        Scheduler(payload)?.OnLockWaitLong(new LockWaitSnapshot(Math.Round(timeMs / 1000, 3), lockName, level, Math.Round(waited, 3), holders, raised));
        AddWarning(
            timeMs,
            "long-lock-wait",
            name,
            level,
            null,
            waited,
            $"{name}: code at level {level} has waited {Ms(waited)} for {lockName}, held by {holders}; " +
            (raised ? "the holder was raised to its level and still holds it." : "the holder could not be raised (it runs off this scheduler)."),
            raised
                ? "The holder runs at the waiter's level and still holds the lock: it is blocked (a synchronous wait) or its critical section is long. Await instead of blocking inside it, or shorten it."
                : "Nothing can raise code off the waiter's scheduler: take the lock on the same scheduler as its waiters, or keep the critical section short.",
            subject: lockName);
    }

    private void TimeSliceWarning(double timeMs, SchedulerModel scheduler, int level, string method, double runMs, bool running, bool exact = true)
    {
        string slice = scheduler.TimeSliceMs is { } value ? $"past its {Ms(value)} time slice" : "a long item (no time slice set)";
        AddWarning(
            timeMs,
            "time-slice",
            scheduler.Name,
            level,
            method,
            runMs,
            $"{scheduler.Name}: {method} {(running ? "has been running" : "ran")} {(exact ? string.Empty : "at least ")}{Ms(runMs)} at level {level} without a checkpoint, {slice}.",
            "Work queued meanwhile waits for it. Call await Priority.Checkpoint() (or check Priority.ShouldYield) in its loop, or move the work to a PriorityThreadPool.");
    }

    private void OnStall(double timeMs, IPayload payload)
    {
        string name = payload.String("context");
        int level = payload.Int("level");
        long waiting = payload.Long("waitingForMilliseconds");
        int pending = payload.Int("pendingCount");
        string method = payload.Has("blockingMethod") ? payload.String("blockingMethod") : string.Empty;
        double blockingFor = payload.Has("blockingForMilliseconds") ? payload.Double("blockingForMilliseconds") : -1;
        int thread = payload.Has("thread") ? payload.Int("thread") : 0;
        SchedulerModel? scheduler = payload.Has("schedulerId") ? Scheduler(payload) : null;
        bool known = false;
        if (scheduler is not null)
        {
            // One event per stall, whether the report or a sample that says the thread is stalled came first.
            ThreadModel stalled = scheduler.Thread(thread);
            known = stalled.StallStartMs is { } start && scheduler.SameStall(start, timeMs - waiting);
            stalled.StallStartMs = timeMs - waiting;
        }

        string who = scheduler?.Kind == "PriorityThreadPool" ? $"thread #{thread} of {name}" : name;
        string blocker = method.Length > 0
            ? $"blocked in {method}{(blockingFor >= 0 ? $" (running {Ms(blockingFor)})" : string.Empty)}"
            : "the blocking item started before the inspector attached, or while it sampled";
        if (!known)
        {
            AddEvent(timeMs, "stall", name, level, method, $"{who}: no item started for {Ms(waiting)} while {pending} wait; {blocker}");
        }

        AddWarning(
            timeMs,
            "stall",
            name,
            level,
            method.Length > 0 ? method : null,
            waiting,
            $"{who} stalled: no item started for {Ms(waiting)} while {pending} item(s) wait (highest level {level}); {blocker}.",
            "The running item blocks: typically a .Wait(), .Result or GetAwaiter().GetResult() on work that needs this scheduler. Await it instead.");
    }

    private void AddEvent(double timeMs, string kind, string scheduler, int level, string method, string detail)
    {
        _events.Add(new InspectorEvent(Math.Round(timeMs / 1000, 3), kind, scheduler, level, method, detail));
        if (_events.Count > 200)
        {
            _events.RemoveAt(0);
        }
    }

    private void AddWarning(double timeMs, string kind, string scheduler, int level, string? method, double durationMs, string message, string advice, string? subject = null)
    {
        string key = string.Join('\u001f', kind, scheduler, level.ToString(CultureInfo.InvariantCulture), method ?? string.Empty, subject ?? string.Empty);
        int count = 1;
        if (_warnings.TryGetValue(key, out Warning? previous))
        {
            // A still-running item reported again by each thread sample is one occurrence; a new run is another.
            bool sameOccurrence = kind is "time-slice" or "blocked-thread" or "stall" && durationMs >= previous.DurationMs && timeMs - (previous.AtSeconds * 1000) <= durationMs;
            count = previous.Count + (sameOccurrence ? 0 : 1);
            _warningOrder.Remove(key);
        }

        _warnings[key] = new Warning(Math.Round(timeMs / 1000, 3), kind, scheduler, level, method, Math.Round(durationMs, 3), message, advice, count);
        _warningOrder.Add(key);
        if (_warningOrder.Count > 100)
        {
            _warnings.Remove(_warningOrder[0]);
            _warningOrder.RemoveAt(0);
        }

        // Starvation is judged per level when the counters arrive (SchedulerModel); nothing else to do here.
    }

    internal void AddStarvationWarning(double timeMs, SchedulerModel scheduler, int level, double waitingMs, long higherStarted)
    {
        AddWarning(
            timeMs,
            "starvation",
            scheduler.Name,
            level,
            null,
            waitingMs,
            $"{scheduler.Name}: level {level} has had work waiting for {Ms(waitingMs)}, far longer than it usually waits, while the levels above it started {higherStarted} items.",
            "Strict priority lets higher levels take every turn. If this level must progress, use PriorityPolicy.Aging (a maximum wait per level) or WeightedShares, or move the busy work lower.");
    }

    private static double? Positive(double value) => value > 0 ? value : null;

    internal static string Ms(double milliseconds) => milliseconds switch
    {
        >= 1000 => (milliseconds / 1000).ToString("0.0", CultureInfo.InvariantCulture) + " s",
        >= 100 => milliseconds.ToString("0", CultureInfo.InvariantCulture) + " ms",
        >= 1 => milliseconds.ToString("0.0", CultureInfo.InvariantCulture) + " ms",
        _ => (milliseconds * 1000).ToString("0", CultureInfo.InvariantCulture) + " us",
    };

    /// <summary>One scheduler's state. Guarded by the model's lock.</summary>
    internal sealed class SchedulerModel(int id)
    {
        private LevelModel[] _levels = [];
        private ThreadModel[] _threads = [];
        private readonly List<ItemRecord> _items = [];
        private readonly List<Escalation> _ended = [];
        private readonly List<LockWaitSnapshot> _lockWaits = [];

        public int Id { get; } = id;

        /// <summary>Its escalations in force.</summary>
        public EscalationTracker Escalations { get; } = new();

        public string Name { get; set; } = string.Empty;

        public string Kind { get; set; } = string.Empty;

        public string Policy { get; set; } = string.Empty;

        public double? TimeSliceMs { get; set; }

        public double? StallTimeoutMs { get; set; }

        public int SamplePeriodMs { get; set; }

        public bool Running { get; set; }

        public bool AllItems { get; set; }

        public int ArmedTimers { get; set; }

        public (string Method, int Level, double LateMs, double AtMs)? LastLateTimer { get; set; }

        public int LevelCount => _levels.Length;

        public void SetShape(int levels, int threads)
        {
            if (_levels.Length != levels)
            {
                _levels = Enumerable.Range(0, levels).Select(_ => new LevelModel()).ToArray();
            }

            if (_threads.Length != threads)
            {
                _threads = Enumerable.Range(0, threads).Select(_ => new ThreadModel()).ToArray();
            }
        }

        public ThreadModel Thread(int index)
        {
            if (index >= _threads.Length)
            {
                Array.Resize(ref _threads, index + 1);
                for (int i = 0; i < _threads.Length; i++)
                {
                    _threads[i] ??= new ThreadModel();
                }
            }

            return _threads[index];
        }

        public void OnLevelState(double timeMs, int level, int queued, long started, int running)
        {
            if ((uint)level >= (uint)_levels.Length)
            {
                return;
            }

            _levels[level].OnState(timeMs, queued, started, running);
        }

        /// <summary>
        /// Whether two reports of a stall's start (an event's time less the stall's age) are of one stall. They differ by how long each
        /// report took to be written (a busy machine: milliseconds and more); two stalls the watchdog reported differ by at least a
        /// stall timeout (the first lasted that long before the second began).
        /// </summary>
        public bool SameStall(double startMs, double otherStartMs) => Math.Abs(startMs - otherStartMs) < Math.Max(20, (StallTimeoutMs ?? 0) / 2);

        /// <summary>The items waiting now (the levels' last samples), and the highest level that has one (-1: none).</summary>
        public (int Pending, int Highest) Waiting()
        {
            int pending = 0;
            int highest = -1;
            for (int level = _levels.Length - 1; level >= 0; level--)
            {
                if (_levels[level].Queued > 0)
                {
                    pending += _levels[level].Queued;
                    highest = highest < 0 ? level : highest;
                }
            }

            return (pending, highest);
        }

        public void OnItem(double timeMs, int level, string method, double runMs, double waitMs, bool sampled)
        {
            _items.Add(new ItemRecord(timeMs, level, method, runMs, waitMs, sampled));
            if (_items.Count > 200_000)
            {
                _items.RemoveRange(0, 100_000);
            }
        }

        public void OnEscalationEnded(double timeMs, string work, int fromLevel, int toLevel, double raisedForMs)
        {
            _ended.Add(Escalations.Ended(timeMs, work, fromLevel, toLevel, raisedForMs));
            if (_ended.Count > 200_000)
            {
                _ended.RemoveRange(0, 100_000);
            }
        }

        public void OnLockWaitLong(LockWaitSnapshot wait)
        {
            _lockWaits.Add(wait);
            if (_lockWaits.Count > 10)
            {
                _lockWaits.RemoveAt(0);
            }
        }

        public SchedulerSnapshot ToSnapshot(double nowMs, double windowMs)
        {
            _items.RemoveAll(item => item.AtMs < nowMs - Math.Max(windowMs, 60_000));
            var recent = _items.Where(item => item.AtMs >= nowMs - windowMs).ToList();
            var levels = new List<LevelSnapshot>();
            for (int level = _levels.Length - 1; level >= 0; level--)
            {
                levels.Add(_levels[level].ToSnapshot(level, nowMs, windowMs, recent.Where(i => i.Level == level).ToList()));
            }

            var threads = _threads.Select((t, index) => new ThreadSnapshot(
                index,
                t.State switch { 2 => "blocked", 1 => "running", _ => "idle" },
                t.Level >= 0 ? t.Level : null,
                t.Method.Length > 0 ? t.Method : null,
                Math.Round(t.RunningForMs, 3), // as of the thread's last sample: never stretched to the latest event, which may be later
                t.Exact,
                t.Dispatched)).ToList();

            var top = recent
                .GroupBy(i => (i.Method, i.Level))
                .Select(g => new CallbackStats(g.Key.Method, g.Key.Level, g.Count(), Math.Round(g.Sum(i => i.RunMs), 3), Math.Round(g.Max(i => i.RunMs), 3), g.Any(i => i.Sampled)))
                .OrderByDescending(c => c.TotalMs)
                .Take(10)
                .ToList();

            TimerSnapshot? late = LastLateTimer is { } timer
                ? new TimerSnapshot(timer.Method, timer.Level, Math.Round(timer.LateMs, 3), Math.Round((nowMs - timer.AtMs) / 1000, 3))
                : null;

            return new SchedulerSnapshot(Id, Name, Kind, _threads.Length, _levels.Length, Policy, TimeSliceMs, StallTimeoutMs, Running, AllItems, ArmedTimers, late, levels, threads, top, SnapshotEscalations(nowMs, windowMs));
        }

        private EscalationsSnapshot SnapshotEscalations(double nowMs, double windowMs)
        {
            _ended.RemoveAll(e => e.EndMs < nowMs - Math.Max(windowMs, 60_000));
            var inForce = Escalations.InForce.Select(e => ToSnapshot(e, Math.Max(0, nowMs - e.StartMs))).ToList();
            var ended = _ended.Where(e => e.EndMs >= nowMs - windowMs).ToList();
            Escalation? longest = ended.Count > 0 ? ended.MaxBy(e => e.EndMs!.Value - e.StartMs) : null;
            return new EscalationsSnapshot(inForce, ended.Count, longest is null ? null : ToSnapshot(longest, longest.EndMs!.Value - longest.StartMs), [.. _lockWaits]);
        }

        private static EscalationSnapshot ToSnapshot(Escalation escalation, double raisedForMs) =>
            new(escalation.Work, escalation.FromLevel, escalation.ToLevel, escalation.Cause, escalation.By, Math.Round(raisedForMs, 3), Math.Round(escalation.StartMs / 1000, 3));

        /// <summary>Starvation: the level's oldest waiting work, against how long it usually waits, while higher levels ran.</summary>
        public void CheckStarvation(double timeMs, InspectorModel model)
        {
            for (int level = 0; level < _levels.Length - 1; level++)
            {
                LevelModel state = _levels[level];
                double oldest = state.OldestWaitMs(timeMs);
                if (oldest <= 0)
                {
                    continue;
                }

                double usual = state.UsualWaitMs();
                if (oldest < Math.Max(1000, 10 * usual))
                {
                    continue;
                }

                long higher = 0;
                for (int above = level + 1; above < _levels.Length; above++)
                {
                    higher += _levels[above].StartedSince(timeMs - oldest);
                }

                if (higher > 0)
                {
                    model.AddStarvationWarning(timeMs, this, level, oldest, higher);
                }
            }
        }
    }

    /// <summary>One thread as its last sample (<c>ThreadState</c>) described it, until an event says otherwise.</summary>
    internal sealed class ThreadModel
    {
        public long Dispatched;
        public int State;
        public int Level = -1;
        public string Method = string.Empty;
        public double RunningForMs;
        public bool Exact;
        public double AtMs;

        /// <summary>When the stall the thread's samples report began (event time), while it lasts.</summary>
        public double? StallStartMs;

        /// <summary>An <c>ItemRun</c> of this thread came after its sample: the item the sample named has ended.</summary>
        public void EndOfSampledItem(double timeMs)
        {
            State = 0;
            Level = -1;
            Method = string.Empty;
            RunningForMs = 0;
            Exact = false;
            AtMs = timeMs;
        }
    }

    private readonly record struct ItemRecord(double AtMs, int Level, string Method, double RunMs, double WaitMs, bool Sampled);

    /// <summary>One level's counters over time, and the waits its probes measured: at each sample the level's enqueued total
    /// (started + queued) is a probe, resolved when the started count reaches it (docs/inspector.md, "Queue wait").</summary>
    private sealed class LevelModel
    {
        private readonly List<(double AtMs, long Started)> _series = [];
        private readonly List<(double AtMs, long Target)> _probes = [];
        private readonly List<(double AtMs, double WaitMs)> _waits = [];
        private int _queued;
        private int _running = -1;

        public int Queued => _queued;
        private long _started;

        public void OnState(double timeMs, int queued, long started, int running)
        {
            _queued = queued;
            _running = running;
            _started = started;
            _series.Add((timeMs, started));
            while (_probes.Count > 0 && started >= _probes[0].Target)
            {
                _waits.Add((timeMs, timeMs - _probes[0].AtMs));
                _probes.RemoveAt(0);
            }

            if (queued > 0)
            {
                _probes.Add((timeMs, started + queued));
            }
            else
            {
                _waits.Add((timeMs, 0)); // an item arriving now would start at once (or after the running one)
            }

            _series.RemoveAll(s => s.AtMs < timeMs - 120_000);
            _waits.RemoveAll(w => w.AtMs < timeMs - 120_000);
        }

        public double OldestWaitMs(double nowMs) => _probes.Count == 0 ? 0 : nowMs - _probes[0].AtMs;

        public double UsualWaitMs()
        {
            if (_waits.Count == 0)
            {
                return 0;
            }

            return Percentile(_waits.Select(w => w.WaitMs).ToList(), 0.99) ?? 0;
        }

        public long StartedSince(double sinceMs)
        {
            foreach ((double at, long started) in _series)
            {
                if (at >= sinceMs)
                {
                    return _started - started;
                }
            }

            return 0;
        }

        public LevelSnapshot ToSnapshot(int level, double nowMs, double windowMs, List<ItemRecord> items)
        {
            double rate = 0;
            double since = nowMs - Math.Min(windowMs, 2000);
            int first = _series.FindIndex(s => s.AtMs >= since);
            if (first >= 0 && first < _series.Count - 1)
            {
                (double at0, long s0) = _series[first];
                (double at1, long s1) = _series[^1];
                rate = at1 > at0 ? (s1 - s0) * 1000 / (at1 - at0) : 0;
            }

            var itemWaits = items.Where(i => i.WaitMs >= 0).Select(i => i.WaitMs).ToList();
            List<double> waits;
            string? source;
            if (itemWaits.Count > 0)
            {
                waits = itemWaits;
                source = "items";
            }
            else
            {
                waits = _waits.Where(w => w.AtMs >= nowMs - windowMs).Select(w => w.WaitMs).ToList();
                source = waits.Count > 0 ? "probes" : null;
            }

            var runs = items.Select(i => i.RunMs).ToList();
            return new LevelSnapshot(
                level,
                _queued,
                _running >= 0 ? _running : null,
                _started,
                Math.Round(rate, 1),
                Round(Percentile(waits, 0.5)),
                Round(Percentile(waits, 0.99)),
                source,
                Round(Percentile(runs, 0.99)),
                _probes.Count > 0 ? Math.Round(nowMs - _probes[0].AtMs, 3) : null);
        }

        private static double? Round(double? value) => value is { } v ? Math.Round(v, 3) : null;
    }

    internal static double? Percentile(List<double> values, double quantile)
    {
        if (values.Count == 0)
        {
            return null;
        }

        values.Sort();
        int index = (int)Math.Ceiling(quantile * values.Count) - 1;
        return values[Math.Clamp(index, 0, values.Count - 1)];
    }
}
