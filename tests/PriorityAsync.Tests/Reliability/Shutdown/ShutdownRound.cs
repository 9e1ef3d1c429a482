using System.Collections.Concurrent;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Shutdown;

/// <summary>
/// One seeded shutdown round ([E-LIFE] and [E-END] in docs/design.md): a scheduler consumed one way (<see cref="EntryKind"/>), three
/// producer threads using every entry point (Post, Send, InvokeAsync awaiting <c>Task.Yield()</c> or the library's own awaitables,
/// <c>TaskFactory.StartNew</c>, root scope children, a controller's posts and <c>Run</c> on a loop, a method hopping on with
/// <c>Prioritize</c> and then <c>Yield</c>), and an end (<see cref="EndKind"/>) at a random moment while they run; they go on after it.
/// Checked by accounting, never by timing; every wait is bounded:
/// <list type="bullet">
/// <item>nothing runs twice;</item>
/// <item>every Post (a level's or a controller's) ran once or was dropped and reported through WorkDropped once; every Send returned
/// after its callback ran once, or threw <see cref="ObjectDisposedException"/> and its callback never ran;</item>
/// <item>every task the library returned (InvokeAsync, a controller's Run, a scope's child, the hopping method's awaits) completes
/// within <see cref="TestTimeout.Unexpected"/> after the end: ran to its end, or faulted with ObjectDisposedException having either
/// never started (and been reported) or, only at an end that drops what is queued, been completed by the end while it waited;
/// a <c>StartNew</c> task ran, or was refused at the call, or was dropped and reported (a TaskScheduler cannot complete a task it
/// was given: the documented exception);</item>
/// <item>the end itself returns, with the outcome it should: nothing after a graceful end, the fault after a fault, at most
/// ObjectDisposedException (an abandoned root child) after a host's Dispose; the state says which;</item>
/// <item>the dropped count equals the WorkDropped events.</item>
/// </list>
/// The seed decides every random choice of the round (the end, when it comes, the producers' operations and levels, the pool's size);
/// the threads' interleaving is the machine's, so a replay repeats the round, not necessarily its timing.
/// </summary>
internal sealed class ShutdownRound
{
    private const int Levels = 3;

    private readonly EntryKind _kind;
    private readonly int _seed;
    private readonly EndKind _end;
    private readonly Random _random;
    private readonly InvalidOperationException _fault;
    private readonly ConcurrentQueue<string> _errors = new();

    private readonly ConcurrentQueue<PostItem> _posts = new();
    private readonly ConcurrentQueue<PostItem> _controllerPosts = new();
    private readonly ConcurrentQueue<WorkRecord> _work = new();
    private readonly ConcurrentQueue<TaskRecord> _startNews = new();
    private readonly ConcurrentQueue<HopRecord> _hops = new();
    private readonly ConcurrentDictionary<Task, int> _droppedTasks = new();
    private readonly ConcurrentDictionary<Task, int> _droppedOperations = new();
    private long _sendsRan;
    private long _sendsRejected;
    private long _sendDrops;
    private long _startNewsRefused;
    private long _dropEvents;
    private int _operations;

    private PriorityScheduler _scheduler = null!;
    private PriorityContext? _context;
    private PriorityTaskController? _controller;
    private PriorityContextThread? _loop;
    private PriorityThreadPool? _pool;
    private PriorityContextDriver? _driver;
    private Thread? _ownerThread; // Run's, or the host's: the scheduler's owner runs there
    private Exception? _ownerOutcome; // what Run, or the host's drain or Dispose that ended the context, threw
    private Exception? _endCallOutcome; // what the end's own call threw
    private TaskCompletionSource? _releaseEntry; // Run: completing it lets the entry return (its Complete)
    private readonly AutoResetEvent _hostWake = new(false);
    private volatile bool _hostOwnerDispose;
    private int _triggerAt;

    private ShutdownRound(EntryKind kind, int seed)
    {
        _kind = kind;
        _seed = seed;
        EndKind[] ends = EndsOf(kind);
        _end = ends[(int)((uint)seed % (uint)ends.Length)];
        _random = new Random(seed);
        _fault = new InvalidOperationException($"shutdown round {kind}:{seed}: the fault");
    }

    /// <summary>The ends that apply to <paramref name="kind"/>: <c>Run</c> has no Dispose (its owner is its entry, whose end is its
    /// Complete), so only it and a fault.</summary>
    public static EndKind[] EndsOf(EntryKind kind) =>
        kind == EntryKind.Run ? [EndKind.Complete, EndKind.Fault] : Enum.GetValues<EndKind>();

    /// <summary>The command that replays the round of <paramref name="kind"/> and <paramref name="seed"/>.</summary>
    public static string ReplayCommand(EntryKind kind, int seed) =>
        $"{ShutdownSuiteTests.ReplayVariable}={kind}:{seed} dotnet test tests/PriorityAsync.Tests --filter \"FullyQualifiedName~{nameof(ShutdownSuiteTests)}\"";

    /// <summary>Runs one round; adds its figures to <paramref name="totals"/>.</summary>
    /// <returns>Null if every check held; else what failed, with the seed and the replay command.</returns>
    public static string? Run(EntryKind kind, int seed, ShutdownTotals totals)
    {
        var round = new ShutdownRound(kind, seed);
        string? failure;
        try
        {
            round.RunRound();
            round.Check(totals);
            failure = round._errors.IsEmpty ? null : string.Join(Environment.NewLine, round._errors.Take(10));
        }
        catch (Exception ex)
        {
            failure = ex.ToString();
        }

        totals.AddRound(round._end, failure is not null);
        return failure is null
            ? null
            : $"Shutdown round {round.Describe()} failed:{Environment.NewLine}{failure}{Environment.NewLine}Replay: {ReplayCommand(kind, seed)}";
    }

    private bool EndDrops => _end == EndKind.Fault || (IsHost && _end != EndKind.Complete);

    private bool IsHost => _kind is EntryKind.HostDriven or EntryKind.HostDrivenBudget;

    private string Describe() =>
        $"{_kind}:{_seed} (end {_end} after {_triggerAt} operations; {_scheduler?.ToString() ?? "not started"})";

    // ---- The round -------------------------------------------------------------------------------------------------------------

    private void RunRound()
    {
        Start();
        _scheduler.WorkDropped += OnWorkDropped;
        if (_context is not null)
        {
            _controller = _context.CreateController(_random.Next(Levels));
        }

        int[] producerOperations = [.. Enumerable.Range(0, 3).Select(_ => _random.Next(20, 300))];
        _triggerAt = _random.Next(0, producerOperations.Sum() + 1);
        using var go = new ManualResetEventSlim(false);
        var threads = new List<Thread>();
        for (int p = 0; p < producerOperations.Length; p++)
        {
            int producerSeed = _random.Next();
            int operations = producerOperations[p];
            threads.Add(new Thread(() =>
            {
                go.Wait();
                Guarded(() => Produce(new Random(producerSeed), operations), "a producer");
            }) { IsBackground = true, Name = $"producer {p}" });
        }

        int endLevel = _random.Next(Levels);
        threads.Add(new Thread(() =>
        {
            go.Wait();
            WaitForTrigger();
            Guarded(() => End(endLevel), "the end");
        }) { IsBackground = true, Name = "ender" });

        threads.ForEach(t => t.Start());
        go.Set();
        if (_end == EndKind.DisposeFromOwner && !IsHost)
        {
            WaitForTrigger();
            _endCallOutcome = Capture(() => ((IDisposable?)_loop ?? _pool!).Dispose()); // blocks until the end: it must return
        }

        foreach (Thread thread in threads)
        {
            thread.JoinOrFail($"{Describe()}: {thread.Name}");
        }

        _ownerThread?.JoinOrFail($"{Describe()}: the owner's thread (Run, or the host's drain loop)");
        try
        {
            _scheduler.Completion.WaitOrFail($"{Describe()}: Completion");
        }
        catch (Exception ex) when (ex is not TimeoutException)
        {
            // The outcome; checked below.
        }

        if (_end is EndKind.Fault or EndKind.DisposeFromAnItem or EndKind.Complete && (_loop is not null || _pool is not null))
        {
            // These ends did not wait: the owner disposes now, as a using block would, and that must return too.
            Exception? disposal = Capture(() => ((IDisposable?)_loop ?? _pool!).Dispose());
            if (_end == EndKind.Fault)
            {
                _endCallOutcome = disposal;
            }
            else if (disposal is not null)
            {
                _errors.Enqueue($"Dispose after the end threw {disposal.GetType().Name}: {disposal.Message}");
            }
        }
    }

    private void Start()
    {
        switch (_kind)
        {
            case EntryKind.LoopThread:
                _loop = new PriorityContextThread(Options<PriorityContextOptions>());
                _scheduler = _context = _loop.Context;
                break;
            case EntryKind.Pool:
                var pool = Options<PriorityThreadPoolOptions>();
                pool.ThreadCount = _random.Next(1, 4);
                if (_random.Next(3) == 0)
                {
                    pool.MaxConcurrencyPerLevel = [.. Enumerable.Range(0, Levels).Select(_ => _random.Next(1, pool.ThreadCount + 1))];
                }

                _scheduler = _pool = new PriorityThreadPool(pool);
                break;
            case EntryKind.Run:
                StartOwner(RunMain);
                break;
            default:
                StartOwner(HostMain);
                break;
        }
    }

    private T Options<T>()
        where T : PrioritySchedulerOptions, new() =>
        new()
        {
            Levels = Levels,
            Name = $"shutdown-{_kind}-{_seed}",
            IdleSpinCount = _random.Next(0, 30),
            StallTimeout = null,
        };

    /// <summary>Starts Run's thread or the host's, and waits until it published its scheduler.</summary>
    private void StartOwner(Action<TaskCompletionSource<PriorityScheduler>> main)
    {
        var ready = new TaskCompletionSource<PriorityScheduler>(TaskCreationOptions.RunContinuationsAsynchronously);
        _ownerThread = new Thread(() =>
        {
            try
            {
                main(ready);
            }
            catch (Exception ex)
            {
                _ownerOutcome = ex;
                ready.TrySetException(ex);
            }
        }) { IsBackground = true, Name = $"{_kind} owner" };
        _ownerThread.Start();
        ready.Task.WaitOrFail($"{Describe()}: the owner's thread to start its scheduler");
        _scheduler = ready.Task.Result;
        _context = (PriorityContext)_scheduler;
    }

    private void RunMain(TaskCompletionSource<PriorityScheduler> ready)
    {
        _releaseEntry = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        TaskCompletionSource release = _releaseEntry;
        PriorityContext.Run(
            async () =>
            {
                ready.SetResult(PriorityContext.Current!);
                await release.Task; // resumes on the loop; the entry's end releases the owner's hold
            },
            Options<PriorityContextOptions>());
    }

    /// <summary>The host's loop, as a user writes it: drain (with or without a budget); when a drain leaves nothing, wait for
    /// workAvailable; stop once the context has ended. A lost wake-up would leave it waiting: that fails the round.</summary>
    private void HostMain(TaskCompletionSource<PriorityScheduler> ready)
    {
        PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(Options<PriorityContextOptions>(), () => _hostWake.Set());
        _driver = driver;
        ready.SetResult(driver.Context);
        var random = new Random(_seed ^ 0x5EED);
        try
        {
            while (driver.Context.State == PrioritySchedulerState.Running)
            {
                if (_hostOwnerDispose)
                {
                    _endCallOutcome = Capture(driver.Dispose); // on the host's thread, outside a drain: ends it now, rethrows the outcome
                    break;
                }

                PriorityDrainResult result = _kind == EntryKind.HostDriven
                    ? driver.Drain()
                    : random.Next(3) == 0
                        ? driver.Drain(TimeSpan.FromTicks(random.Next(500, 20_000)), random.Next(Levels))
                        : driver.Drain(TimeSpan.FromTicks(random.Next(500, 20_000)));
                if (!result.WorkRemains
                    && driver.Context.State == PrioritySchedulerState.Running
                    && !_hostWake.WaitOne(TestTimeout.Unexpected))
                {
                    _errors.Enqueue($"The host was not told of work for {TestTimeout.Unexpected.TotalSeconds} s while the context ran ({driver.Context.GetSnapshot().OutstandingOperations} outstanding)");
                    break;
                }
            }
        }
        catch (Exception ex)
        {
            _ownerOutcome = ex; // the drain that ended the context rethrew its outcome
        }
    }

    private void WaitForTrigger()
    {
        if (!SpinWait.SpinUntil(() => Volatile.Read(ref _operations) >= _triggerAt, TestTimeout.Unexpected))
        {
            _errors.Enqueue($"The producers stopped before {_triggerAt} operations");
        }
    }

    /// <summary>The end, from the ender thread (the owner's Dispose of a loop or a pool is the round's own thread).</summary>
    private void End(int level)
    {
        SynchronizationContext target = _scheduler.GetSynchronizationContext(level);
        switch (_end)
        {
            case EndKind.Complete:
                switch (_kind)
                {
                    case EntryKind.LoopThread:
                        _loop!.Complete();
                        break;
                    case EntryKind.Pool:
                        _pool!.Complete();
                        break;
                    case EntryKind.Run:
                        _releaseEntry!.SetResult();
                        break;
                    default:
                        _driver!.Complete();
                        break;
                }

                break;
            case EndKind.DisposeFromOwner:
                if (IsHost)
                {
                    _hostOwnerDispose = true;
                    _hostWake.Set();
                }

                break;
            case EndKind.DisposeFromAnotherThread:
                _endCallOutcome = Capture(() => ((IDisposable?)_loop ?? (IDisposable?)_pool ?? _driver!).Dispose());
                break;
            case EndKind.DisposeFromAnItem:
                target.Post(_ => ((IDisposable?)_loop ?? (IDisposable?)_pool ?? _driver!).Dispose(), null); // never waits: it cannot wait for itself
                break;
            case EndKind.DisposeAsync:
                ValueTask disposal = ((IAsyncDisposable?)_loop ?? (IAsyncDisposable?)_pool ?? _driver!).DisposeAsync();
                _endCallOutcome = Capture(() => disposal.AsTask().WaitOrFail($"{Describe()}: DisposeAsync"));
                break;
            default:
                target.Post(_ => throw _fault, null);
                break;
        }
    }

    /// <summary>Runs a thread's body: what it throws (a bounded wait that timed out, a call that threw what it must not) fails the
    /// round, never the test process.</summary>
    private void Guarded(Action body, string what)
    {
        try
        {
            body();
        }
        catch (Exception ex)
        {
            _errors.Enqueue($"{what} threw {ex}");
        }
    }

    private static Exception? Capture(Action action)
    {
        try
        {
            action();
            return null;
        }
        catch (TimeoutException)
        {
            throw;
        }
        catch (Exception ex)
        {
            return ex;
        }
    }

    // ---- The producers ---------------------------------------------------------------------------------------------------------

    private void Produce(Random random, int operations)
    {
        for (int i = 0; i < operations; i++)
        {
            int level = random.Next(Levels);
            int choice = random.Next(_controller is null ? 85 : 100);
            if (choice < 30)
            {
                Post(level);
            }
            else if (choice < 35)
            {
                Send(level);
            }
            else if (choice < 50)
            {
                Invoke(level, random.Next(4));
            }
            else if (choice < 60)
            {
                StartNew(level);
            }
            else if (choice < 70)
            {
                StartChild(level, random.Next(Levels), inNewScope: random.Next(3) == 0);
            }
            else if (choice < 85)
            {
                _hops.Enqueue(HopRecord.Start(_scheduler, level));
            }
            else if (choice < 95)
            {
                var item = new PostItem();
                _controllerPosts.Enqueue(item);
                _controller!.Post(PostItem.Callback, item);
            }
            else
            {
                var record = new WorkRecord("PriorityTaskController.Run");
                record.Task = _controller!.Run(async () =>
                {
                    record.Started();
                    await Task.Yield(); // comes back through the controller's context
                    record.Finished();
                });
                _work.Enqueue(record);
            }

            Interlocked.Increment(ref _operations);
            if (random.Next(16) == 0)
            {
                Thread.Yield(); // lets the end and the other threads in between operations
            }
        }
    }

    private void Post(int level)
    {
        var item = new PostItem();
        _posts.Enqueue(item);
        _scheduler.GetSynchronizationContext(level).Post(PostItem.Callback, item); // never throws, even late
    }

    private void Send(int level)
    {
        var item = new PostItem();
        try
        {
            _scheduler.GetSynchronizationContext(level).Send(PostItem.Callback, item);
            Interlocked.Increment(ref _sendsRan);
            if (item.Ran != 1)
            {
                _errors.Enqueue($"A Send returned but its callback ran {item.Ran} times");
            }
        }
        catch (ObjectDisposedException)
        {
            Interlocked.Increment(ref _sendsRejected);
            if (item.Ran != 0)
            {
                _errors.Enqueue($"A Send threw ObjectDisposedException but its callback ran {item.Ran} times");
            }
        }
    }

    /// <summary>InvokeAsync work that awaits a plain <c>Task.Yield()</c> (the issue's case: the continuation goes through the level's
    /// SynchronizationContext as the runtime's own callback), or the library's <c>Yield</c> or <c>Prioritize</c>.</summary>
    private void Invoke(int level, int awaitKind)
    {
        var record = new WorkRecord("InvokeAsync");
        record.Task = _scheduler.InvokeAsync(
            async () =>
            {
                record.Started();
                switch (awaitKind)
                {
                    case 0:
                    case 1:
                        await Task.Yield();
                        break;
                    case 2:
                        await Priority.Yield();
                        break;
                    default:
                        await _scheduler.Prioritize((level + 1) % Levels);
                        break;
                }

                record.Finished();
            },
            level);
        _work.Enqueue(record);
    }

    private void StartNew(int level)
    {
        var record = new TaskRecord();
        try
        {
            record.Task = _scheduler.GetTaskFactory(level).StartNew(record.Run);
            _startNews.Enqueue(record);
        }
        catch (TaskSchedulerException ex) when (ex.InnerException is ObjectDisposedException)
        {
            Interlocked.Increment(ref _startNewsRefused); // after the end: refused at the call, the task faulted
        }
    }

    /// <summary>A posted item that starts a root scope child, or opens a scope (<c>TaskScope.RunAsync</c>) whose body starts one and
    /// awaits <c>Task.Yield()</c> (both are started on the scheduler's threads).</summary>
    private void StartChild(int level, int childLevel, bool inNewScope)
    {
        var item = new PostItem(() =>
        {
            var record = new WorkRecord("TaskScope.Start");
            if (!inNewScope)
            {
                record.Task = _scheduler.Scope.StartAsync(Child, childLevel);
                _work.Enqueue(record);
                return;
            }

            var body = new WorkRecord("TaskScope.RunAsync");
            body.Task = TaskScope.RunAsync(async scope =>
            {
                body.Started();
                record.Task = scope.StartAsync(Child, childLevel);
                _work.Enqueue(record);
                await Task.Yield();
                body.Finished();
            });
            _work.Enqueue(body);

            async Task Child(CancellationToken cancellation)
            {
                record.Started();
                await Task.Yield();
                record.Finished();
            }
        });
        _posts.Enqueue(item);
        _scheduler.GetSynchronizationContext(level).Post(PostItem.Callback, item);
    }

    private void OnWorkDropped(object? sender, WorkDroppedEventArgs e)
    {
        Interlocked.Increment(ref _dropEvents);
        switch (e.State)
        {
            case PostItem item:
                item.MarkDropped();
                break;
            case Task task:
                _droppedTasks.AddOrUpdate(task, 1, static (_, n) => n + 1);
                break;
            case TaskCompletionSource<object?> operation when e.Callback == IInvokeOperation.RunCallback || e.Callback == IControllerRun.Callback:
                _droppedOperations.AddOrUpdate(operation.Task, 1, static (_, n) => n + 1);
                break;
            default:
                if (e.Callback == SendWaiter.RunCallback)
                {
                    Interlocked.Increment(ref _sendDrops);
                }

                break;
        }
    }

    // ---- The checks ------------------------------------------------------------------------------------------------------------

    private void Check(ShutdownTotals totals)
    {
        CheckTheEnd();
        CheckPosts(_posts, "post", totals);
        CheckPosts(_controllerPosts, "controller post", totals);
        totals.Count("sends ran", _sendsRan);
        totals.Count("sends rejected", _sendsRejected);
        if (Interlocked.Read(ref _sendDrops) > _sendsRejected)
        {
            _errors.Enqueue($"{_sendDrops} Sends were reported dropped, but only {_sendsRejected} threw ObjectDisposedException");
        }

        CheckStartNews(totals);

        // Every task the library returned completes within the bound after the end (the end has returned: this is after it).
        Task[] pending = [.. _work.Select(w => w.Task!).Concat(_hops.Select(h => h.Task))];
        if (Task.WaitAny([Task.WhenAll(pending)], TestTimeout.Unexpected) < 0)
        {
            foreach (WorkRecord record in _work.Where(w => !w.Task!.IsCompleted).Take(5))
            {
                _errors.Enqueue($"A {record.Kind} task is still {record.Task!.Status} {TestTimeout.Unexpected.TotalSeconds} s after the end (started {record.StartCount}, finished {record.FinishCount}, reported dropped {_droppedOperations.GetValueOrDefault(record.Task!)})");
            }

            foreach (HopRecord hop in _hops.Where(h => !h.Task.IsCompleted).Take(5))
            {
                _errors.Enqueue($"A method that hopped on with Prioritize is still {hop.Task.Status} {TestTimeout.Unexpected.TotalSeconds} s after the end");
            }
        }

        foreach (WorkRecord record in _work)
        {
            CheckWork(record, totals);
        }

        foreach (HopRecord hop in _hops.Where(h => h.Task.IsCompleted))
        {
            if (hop.Task.IsCompletedSuccessfully)
            {
                totals.Count("hops ran");
                if (!hop.RanOnScheduler)
                {
                    _errors.Enqueue("A method that hopped on with Prioritize went on off the scheduler without an exception");
                }
            }
            else if (hop.Task.Exception?.InnerException is ObjectDisposedException)
            {
                totals.Count("hops rejected");
            }
            else
            {
                _errors.Enqueue($"A method that hopped on with Prioritize ended {hop.Task.Status}: {hop.Task.Exception?.InnerException}");
            }
        }

        long items = _posts.Count + _controllerPosts.Count + _sendsRan + _sendsRejected + _work.Count(w => w.Kind != "TaskScope.Start")
            + _startNews.Count + _startNewsRefused + _hops.Count;
        totals.AddItems(items);
    }

    private void CheckTheEnd()
    {
        PrioritySchedulerState expected = _end == EndKind.Fault ? PrioritySchedulerState.Faulted : PrioritySchedulerState.Completed;
        if (_scheduler.State != expected)
        {
            _errors.Enqueue($"The scheduler is {_scheduler.State} after the end, not {expected}");
        }

        Exception? completion = _scheduler.Completion.Exception?.InnerException;
        CheckOutcome("Completion", completion);
        CheckOutcome("the end's call", _endCallOutcome);
        CheckOutcome(_kind == EntryKind.Run ? "PriorityContext.Run" : "the host's drain loop", _ownerOutcome);
        if (_end == EndKind.Fault && !ReferenceEquals(completion, _fault))
        {
            _errors.Enqueue($"Completion faulted with {completion?.GetType().Name ?? "nothing"}, not the fault");
        }

        long dropped = _scheduler.GetSnapshot().DroppedCount;
        if (dropped != Interlocked.Read(ref _dropEvents))
        {
            _errors.Enqueue($"The snapshot counts {dropped} drops, and WorkDropped was raised {_dropEvents} times");
        }
    }

    /// <summary>What an end may throw, or fault Completion with: nothing after a graceful end; the fault after a fault; after a host's
    /// Dispose, ObjectDisposedException at most (a root child the end completed, or dropped before it ran, is a root failure).</summary>
    private void CheckOutcome(string where, Exception? outcome)
    {
        bool expected = outcome is null
            || (_end == EndKind.Fault && ReferenceEquals(outcome, _fault))
            || (EndDrops && outcome is ObjectDisposedException);
        if (!expected)
        {
            _errors.Enqueue($"{where} ended with {outcome}");
        }
    }

    private void CheckPosts(IEnumerable<PostItem> items, string what, ShutdownTotals totals)
    {
        foreach (PostItem item in items)
        {
            if (item.Ran + item.Dropped != 1)
            {
                _errors.Enqueue($"A {what} ran {item.Ran} times and was reported dropped {item.Dropped} times: exactly one of the two, once");
            }

            totals.Count($"{what}s ran", item.Ran);
            totals.Count($"{what}s dropped", item.Dropped);
        }
    }

    private void CheckStartNews(ShutdownTotals totals)
    {
        totals.Count("StartNew refused", _startNewsRefused);
        foreach (TaskRecord record in _startNews)
        {
            int reported = _droppedTasks.GetValueOrDefault(record.Task!);
            if (record.Task!.IsCompletedSuccessfully && record.Ran == 1 && reported == 0)
            {
                totals.Count("StartNew ran");
            }
            else if (!record.Task.IsCompleted && record.Ran == 0 && reported == 1)
            {
                totals.Count("StartNew dropped"); // never completes: a TaskScheduler cannot complete a task it was given
            }
            else
            {
                _errors.Enqueue($"A StartNew task is {record.Task.Status}, ran {record.Ran} times and was reported dropped {reported} times");
            }
        }
    }

    private void CheckWork(WorkRecord record, ShutdownTotals totals)
    {
        if (record.StartCount > 1 || record.FinishCount > 1)
        {
            _errors.Enqueue($"A {record.Kind} work started {record.StartCount} times and finished {record.FinishCount} times");
        }

        Task task = record.Task!;
        if (!task.IsCompleted)
        {
            return; // reported above
        }

        int reported = _droppedOperations.GetValueOrDefault(task);
        if (task.IsCompletedSuccessfully)
        {
            totals.Count($"{record.Kind} ran");
            if (record.StartCount != 1 || record.FinishCount != 1 || reported != 0)
            {
                _errors.Enqueue($"A {record.Kind} task ran to completion, but its work started {record.StartCount} and finished {record.FinishCount} times (reported dropped {reported})");
            }
        }
        else if (record.Kind == "TaskScope.RunAsync" && EndDrops && task.Exception!.InnerExceptions.All(e => e is ObjectDisposedException))
        {
            totals.Count($"{record.Kind} stopped by the end"); // its body, or a child, waited when the end came
        }
        else if (task.Exception?.InnerException is ObjectDisposedException && record.FinishCount == 0)
        {
            if (record.StartCount == 0 && reported == 1)
            {
                totals.Count($"{record.Kind} rejected"); // dropped before it ran, and reported
            }
            else if (record.StartCount == 1 && reported == 0 && EndDrops)
            {
                totals.Count($"{record.Kind} stopped by the end"); // it waited: the end completed it, or its own await of the library threw
            }
            else
            {
                _errors.Enqueue($"A {record.Kind} task faulted with ObjectDisposedException; its work started {record.StartCount} times, was reported dropped {reported} times, at an end that {(EndDrops ? "drops" : "does not drop")} what is queued");
            }
        }
        else
        {
            _errors.Enqueue($"A {record.Kind} task ended {task.Status} ({task.Exception?.InnerException?.Message}); its work started {record.StartCount} and finished {record.FinishCount} times");
        }
    }

    // ---- What the producers track --------------------------------------------------------------------------------------------------

    /// <summary>A posted or sent callback: how often it ran, and how often WorkDropped reported it.</summary>
    private sealed class PostItem(Action? body = null)
    {
        public static readonly SendOrPostCallback Callback = static state =>
        {
            var item = (PostItem)state!;
            Interlocked.Increment(ref item._ran);
            item._body?.Invoke();
        };

        private readonly Action? _body = body;
        private int _ran;
        private int _dropped;

        public int Ran => Volatile.Read(ref _ran);

        public int Dropped => Volatile.Read(ref _dropped);

        public void MarkDropped() => Interlocked.Increment(ref _dropped);
    }

    /// <summary>Asynchronous work the library returned a task for: InvokeAsync, a controller's Run, a scope's child.</summary>
    private sealed class WorkRecord(string kind)
    {
        private int _started;
        private int _finished;

        public string Kind => kind;

        public Task? Task { get; set; }

        public int StartCount => Volatile.Read(ref _started);

        public int FinishCount => Volatile.Read(ref _finished);

        public void Started() => Interlocked.Increment(ref _started);

        public void Finished() => Interlocked.Increment(ref _finished);
    }

    private sealed class TaskRecord
    {
        private int _ran;

        public Task? Task { get; set; }

        public int Ran => Volatile.Read(ref _ran);

        public void Run() => Interlocked.Increment(ref _ran);
    }

    /// <summary>A method that hops onto the scheduler from a producer thread with <c>Prioritize</c>, then queues its rest with
    /// <c>Yield</c>: both must resume on the scheduler, or throw ObjectDisposedException once it has stopped.</summary>
    private sealed class HopRecord
    {
        private bool _offScheduler;

        public Task Task { get; private set; } = null!;

        public bool RanOnScheduler => !_offScheduler;

        public static HopRecord Start(PriorityScheduler scheduler, int level)
        {
            var record = new HopRecord();
            record.Task = record.Hop(scheduler, level);
            return record;
        }

        private async Task Hop(PriorityScheduler scheduler, int level)
        {
            await scheduler.Prioritize(level);
            _offScheduler |= Priority.CurrentScheduler != scheduler;
            await Priority.Yield();
            _offScheduler |= Priority.CurrentScheduler != scheduler;
        }
    }
}
