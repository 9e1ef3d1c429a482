using System;
using System.Globalization;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace PriorityAsync.Hosting.Internal;

/// <summary>
/// The lifecycle of a priority worker, whichever scheduler runs it: <see cref="ContextWorkerCore"/> (one loop thread, for
/// <see cref="PriorityBackgroundService"/>) or <see cref="PoolWorkerCore"/> (a <see cref="PriorityThreadPool"/>, for
/// <see cref="PriorityThreadPoolBackgroundService"/>). The public workers hold one and forward to it; what differs between the two
/// schedulers (creating it, starting the entry, completing it, cancelling its root children) is the subclass's.
/// </summary>
/// <remarks>
/// <para>[H-WORKER]: the entry runs <c>ExecuteAsync</c> on the scheduler; when its task completes the worker's hold is released and the
/// scheduler stops once its queued work and outstanding operations (root children included) are done. <c>ExecuteTask</c> completes
/// exactly once. The stopping token, and <c>ExecuteAsync</c> ending with a fault or a cancellation, cancel the root children.</para>
/// <para>Thread safety: <see cref="StartAsync"/>, <see cref="StopAsync"/>, <see cref="Dispose"/> and <see cref="Configure"/> are called
/// by the host, one at a time; the event handlers run on the scheduler's threads and the watchdog's; every other member may be read
/// from any thread.</para>
/// </remarks>
internal abstract class WorkerCore : IDisposable
{
    private readonly TaskCompletionSource _execute = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Type _workerType;
    private readonly Func<CancellationToken, Task> _executeAsync;
    private PriorityWorkerOptions _options = new();
    private TimeProvider _timeProvider = TimeProvider.System;
    private ILogger _logger = NullLogger.Instance;
    private string? _name;
    private PriorityScheduler? _scheduler;
    private CancellationTokenSource? _stoppingCts;
    private DropLog? _drops;
    private Task? _executeAsyncTask;
    private int _started;

    // The number of items the scheduler had started when the last stall was reported, or -1 (no stall reported). Written by the
    // watchdog's thread, read by the health check: the stall lasts while this count has not moved and work is waiting.
    private long _stallMark = -1;

    /// <param name="workerType">The public worker's type, whose name is the default <see cref="Name"/>.</param>
    /// <param name="executeAsync">The worker's <c>ExecuteAsync</c>.</param>
    protected WorkerCore(Type workerType, Func<CancellationToken, Task> executeAsync)
    {
        _workerType = workerType;
        _executeAsync = executeAsync;
    }

    public string Name => _name ?? _workerType.Name;

    public Task? ExecuteTask => Volatile.Read(ref _started) == 0 ? null : _execute.Task;

    public PriorityWorkerOptions Options => _options;

    /// <summary>The clock of the scheduler's loop timers (<c>Priority.Delay</c>, its <c>TimeProvider</c>): the host's registered
    /// <see cref="System.TimeProvider"/>, or <see cref="TimeProvider.System"/>.</summary>
    public TimeProvider TimeProvider => _timeProvider;

    /// <summary>The scheduler, once <see cref="StartAsync"/> created it; <see langword="null"/> before.</summary>
    public PriorityScheduler? SchedulerOrNull => _scheduler;

    public long StallMark => Volatile.Read(ref _stallMark);

    /// <summary>The token given to <c>ExecuteAsync</c>; valid once the scheduler was created.</summary>
    protected CancellationToken StoppingToken => _stoppingCts!.Token;

    /// <summary>Describes a snapshot's pending work per level, highest first, for the shutdown-timeout log.</summary>
    public static string DescribePending(PrioritySchedulerSnapshot snapshot)
    {
        if (snapshot.TotalPending == 0)
        {
            return $"no callbacks waiting, {snapshot.OutstandingOperations} operations outstanding";
        }

        var text = new StringBuilder();
        for (int level = snapshot.PendingPerLevel.Count - 1; level >= 0; level--)
        {
            if (snapshot.PendingPerLevel[level] != 0)
            {
                text.Append(CultureInfo.InvariantCulture, $"level {level}: {snapshot.PendingPerLevel[level]} waiting, ");
            }
        }

        return text.Append(CultureInfo.InvariantCulture, $"{snapshot.OutstandingOperations} operations outstanding").ToString();
    }

    /// <summary>The number of items a snapshot's scheduler has started, over all levels: the stall mark's measure.</summary>
    public static long Dispatched(PrioritySchedulerSnapshot snapshot)
    {
        long total = 0;
        foreach (long count in snapshot.RunPerLevel)
        {
            total += count;
        }

        return total;
    }

    /// <summary>Called by the registration before the host starts the worker.</summary>
    public void Configure(string name, PriorityWorkerOptions options, TimeProvider timeProvider, ILogger logger)
    {
        if (_scheduler is not null)
        {
            throw new InvalidOperationException($"Worker {Name} is already started.");
        }

        _name = name;
        _options = options;
        _timeProvider = timeProvider;
        _logger = logger;
    }

    public async Task StartAsync(string publicTypeName, CancellationToken cancellationToken)
    {
        if (_scheduler is not null)
        {
            throw new InvalidOperationException($"Worker {Name} was already started; a {publicTypeName} starts once.");
        }

        PriorityWorkerOptions options = _options;
        PriorityScheduler scheduler = CreateScheduler(options, Name);
        _scheduler = scheduler;

        // Nothing runs on the scheduler before the entry is queued below, so subscribing now misses no drop, stall or exception.
        scheduler.UnhandledException += OnUnhandledException;
        scheduler.WorkDropped += OnWorkDropped;
        scheduler.StallDetected += OnStallDetected;
        _drops = new DropLog(_logger, Name, options.Levels, options.WorkDroppedLogInterval);
        _stoppingCts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        // Stopping cancels the worker's root children (Priority.Start, Scope.Start); the scheduler still waits for them ([H-WORKER]).
        _stoppingCts.Token.UnsafeRegister(static core => ((WorkerCore)core!)._scheduler!.Scope.Cancel(), this);
        _ = Completion.ContinueWith(
            static (completion, state) => ((WorkerCore)state!).OnSchedulerStopped(completion),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);

        var running = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task started = StartEntry(options.DefaultLevel, running);
        Volatile.Write(ref _started, 1);

        try
        {
            await started.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested && !started.IsFaulted)
        {
            // The host asked to stop while it was starting (Ctrl+C or SIGTERM during start-up: the host cancels the start token).
            // Returning, as BackgroundService.StartAsync does, lets the host finish starting and then stop us; throwing would make
            // the host fail to start and Run rethrow, so the process would end with an unhandled exception instead of exit code 0.
            // The stopping token, linked to the start token, is already cancelled: ExecuteAsync sees it as soon as it starts.
            return;
        }

        Log.Started(_logger, Name, options.Levels, options.DefaultLevel);
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        PriorityScheduler? scheduler = _scheduler;
        if (scheduler is null)
        {
            return;
        }

        try
        {
            _stoppingCts!.Cancel();
        }
        finally
        {
            Task stopped = Task.WhenAll(_execute.Task, Completion);
            await stopped.WaitAsync(cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (stopped.IsCompleted)
            {
                Log.Stopped(_logger, Name);
            }
            else
            {
                Log.StopTimedOut(_logger, Name, DescribePending(scheduler.GetSnapshot()));
                Complete();
            }

            _drops!.Flush();
        }
    }

    /// <summary>Cancels the stopping token and lets the scheduler end; does not wait (the scheduler ends, and releases what it
    /// holds, once its work is done).</summary>
    public void Dispose()
    {
        _stoppingCts?.Cancel();
        if (_scheduler is not null)
        {
            Complete();
        }

        _drops?.Dispose();
    }

    /// <summary>Creates the scheduler from the worker's options, its loop timers on <see cref="TimeProvider"/>; called once, by
    /// <see cref="StartAsync"/>.</summary>
    protected abstract PriorityScheduler CreateScheduler(PriorityWorkerOptions options, string name);

    /// <summary>Gets the task that completes when the scheduler has stopped (faulted if it faulted).</summary>
    private Task Completion => _scheduler!.Completion;

    /// <summary>Releases the worker's hold: the scheduler stops once its queued work and outstanding operations are done. Idempotent.</summary>
    protected abstract void Complete();

    /// <summary>Queues the entry at <paramref name="level"/> as a plain post ([H-WORKER]): <c>ExecuteAsync</c> holds no outstanding
    /// operation, so completing the scheduler from outside (the host's shutdown timeout) ends it even while <c>ExecuteAsync</c> is
    /// pending, on either scheduler. The entry sets <paramref name="running"/>, then runs <c>ExecuteAsync</c>.</summary>
    /// <returns>The task <see cref="StartAsync"/> waits for: complete once the entry runs.</returns>
    private Task StartEntry(int level, TaskCompletionSource running)
    {
        _scheduler!.GetSynchronizationContext(level).Post(
            static state =>
            {
                var (core, running) = ((WorkerCore, TaskCompletionSource))state!;
                running.TrySetResult();
                core.OnExecuteAsyncStarted(core.InvokeExecuteAsync());
            },
            (this, running));
        return running.Task;
    }

    /// <summary>Calls <c>ExecuteAsync</c> with the stopping token; a synchronous throw becomes a faulted task.</summary>
    private Task InvokeExecuteAsync()
    {
        try
        {
            return _executeAsync(StoppingToken);
        }
        catch (Exception ex)
        {
            return Task.FromException(ex);
        }
    }

    /// <summary>Called with <c>ExecuteAsync</c>'s task (or the task standing for it) once it exists.</summary>
    private void OnExecuteAsyncStarted(Task task) =>
        _ = task.ContinueWith(
            static (task, state) => ((WorkerCore)state!).OnExecuteAsyncCompleted(task),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);

    private void OnExecuteAsyncCompleted(Task task)
    {
        Volatile.Write(ref _executeAsyncTask, task); // before Complete, so the scheduler's completion continuation sees it ([H-WORKER])
        if (task.Exception is { } fault)
        {
            _execute.TrySetException(fault.InnerExceptions);
        }

        // ExecuteAsync is the root children's parent: a fault or a cancellation cancels them; the scheduler still waits for them.
        if (!task.IsCompletedSuccessfully)
        {
            _scheduler!.Scope.Cancel();
        }

        Complete();
    }

    private void OnSchedulerStopped(Task completion)
        => WorkerOutcome.SchedulerStopped(_execute, completion, Volatile.Read(ref _executeAsyncTask), _stoppingCts!.Token);

    private void OnUnhandledException(object? sender, PriorityUnhandledExceptionEventArgs e)
        => Log.UnhandledException(_logger, e.Exception, Name, e.Level);

    private void OnWorkDropped(object? sender, WorkDroppedEventArgs e) => _drops?.Record(e.Level);

    private void OnStallDetected(object? sender, StallDetectedEventArgs e)
    {
        // The health check sees the stall before anyone reads the log: mark first, then log.
        Volatile.Write(ref _stallMark, Dispatched(_scheduler!.GetSnapshot()));
        Log.StallDetected(_logger, Name, e.Level, (long)e.WaitingFor.TotalMilliseconds, e.PendingCount, (long)e.StallTimeout.TotalMilliseconds);
    }
}
