using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using PriorityAsync.Hosting.Internal;

namespace PriorityAsync.Hosting;

/// <summary>
/// A <see cref="BackgroundService"/> whose <see cref="BackgroundService.ExecuteAsync(CancellationToken)"/> runs on its own
/// <see cref="PriorityThreadPool"/> (<see cref="PriorityWorkerOptions.ThreadCount"/> threads, one per core by default), starting at
/// <see cref="PriorityWorkerOptions.DefaultLevel"/>: every <c>await</c> in it resumes on one of the pool's threads at the level it was
/// running at, and <c>await Priority.Prioritize(level)</c> moves work between levels. Work at several levels and of several messages
/// runs on several cores at once: the worker's code must be thread-safe (use <see cref="PriorityBackgroundService"/> for one thread
/// and no locks).
/// </summary>
/// <remarks>
/// <para>Register it with <see cref="PriorityWorkerServiceCollectionExtensions.AddPriorityThreadPoolWorker{TWorker}(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{PriorityWorkerOptions}?)"/>
/// to get options from configuration (the same <see cref="PriorityWorkerOptions"/> as the single-threaded worker), validation at
/// start-up, logging and the health check (<see cref="PriorityWorkersHealthCheck"/>); registered with plain <c>AddHostedService</c> it
/// runs with the default options and logs nothing.</para>
/// <para><see cref="StartAsync"/> returns once the pool runs and <c>ExecuteAsync</c> was started on it. <see cref="StopAsync"/> cancels
/// the stopping token and waits, within the host's shutdown timeout, for <c>ExecuteAsync</c> to return and for the pool to finish the
/// work still queued and its outstanding operations (<c>async void</c> work, <c>Priority.Start</c> children); if the timeout ends
/// first it logs what is still waiting, per level. Unlike <see cref="PriorityBackgroundService"/>, the stopping token does not cancel
/// <c>Priority.Start</c> children by itself (the pool has no root scope to cancel): pass them the token.</para>
/// <para>The host treats it as any <see cref="BackgroundService"/>: if <c>ExecuteAsync</c> faults, or an exception escapes a callback
/// on the pool (which stops the pool), <see cref="ExecuteTask"/> faults and the host's <c>BackgroundServiceExceptionBehavior</c>
/// applies.</para>
/// </remarks>
public abstract class PriorityThreadPoolBackgroundService : BackgroundService, IPriorityWorker
{
    // Lifecycle (the same contract as PriorityBackgroundService's, on a pool):
    //   StartAsync (once) creates the pool and queues ExecuteAsync at DefaultLevel through InvokeAsync, whose task is ExecuteAsync's.
    //   The entry signals "running" first (StartAsync then returns).
    //   When ExecuteAsync's task completes, the pool is completed: it still runs what is queued and waits for its outstanding
    //   operations, then stops; Completion completes. The pool cannot stop before that: nothing calls Complete() earlier.
    //   Invariant: _execute (ExecuteTask) completes exactly once: it faults as soon as ExecuteAsync faults or the pool faults (the
    //   host must learn of a fault at once); otherwise it completes with ExecuteAsync's outcome once ExecuteAsync has completed and
    //   the pool has stopped. If the pool is completed from outside (shutdown timeout, Dispose) while ExecuteAsync is still pending,
    //   _execute is cancelled when the pool stops. _executeAsyncTask is written (volatile) before Complete() is called, so the
    //   pool's completion continuation, which runs after Complete(), sees it unless the pool was completed from outside.

    private readonly TaskCompletionSource _execute = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private PriorityWorkerOptions _options = new();
    private ILogger _logger = NullLogger.Instance;
    private string? _name;
    private PriorityThreadPool? _pool;
    private CancellationTokenSource? _stoppingCts;
    private DropLog? _drops;
    private Task? _executeAsyncTask;
    private int _started;

    // The number of items the pool had started when the last stall was reported, or -1. Written by the watchdog's thread, read by
    // the health check.
    private long _stallMark = -1;

    /// <summary>Initializes a new instance of the <see cref="PriorityThreadPoolBackgroundService"/> class.</summary>
    protected PriorityThreadPoolBackgroundService()
    {
    }

    /// <summary>Gets the worker's name: the name it was registered with, or its type's name.</summary>
    /// <remarks>It names the configuration section (<c>PriorityAsync:Workers:&lt;name&gt;</c>), the pool's threads and every log message.</remarks>
    public string Name => _name ?? GetType().Name;

    /// <summary>Gets the task that completes when the worker is done: <see langword="null"/> before <see cref="StartAsync"/>; see the
    /// remarks of <see cref="PriorityThreadPoolBackgroundService"/> for when it faults.</summary>
    public override Task? ExecuteTask => Volatile.Read(ref _started) == 0 ? null : _execute.Task;

    /// <summary>Gets the worker's pool, whose threads run <c>ExecuteAsync</c>.</summary>
    /// <exception cref="InvalidOperationException">The worker has not been started.</exception>
    protected PriorityThreadPool Pool => _pool
        ?? throw new InvalidOperationException($"Worker {Name} has no PriorityThreadPool before StartAsync.");

    PriorityWorkerOptions IPriorityWorker.Options => _options;

    IPriorityScheduler? IPriorityWorker.SchedulerOrNull => _pool;

    long IPriorityWorker.StallMark => Volatile.Read(ref _stallMark);

    /// <summary>Starts the worker's pool and <c>ExecuteAsync</c> on it; returns once <c>ExecuteAsync</c> was started.</summary>
    /// <param name="cancellationToken">Aborts the start; also linked to the token given to <c>ExecuteAsync</c>.</param>
    /// <returns>A task that completes when <c>ExecuteAsync</c> was started on the pool.</returns>
    /// <exception cref="InvalidOperationException">The worker was already started.</exception>
    public override async Task StartAsync(CancellationToken cancellationToken)
    {
        if (_pool is not null)
        {
            throw new InvalidOperationException($"Worker {Name} was already started; a PriorityThreadPoolBackgroundService starts once.");
        }

        PriorityWorkerOptions options = _options;
        var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = options.Levels,
            DefaultLevel = options.DefaultLevel,
            ThreadCount = options.ThreadCount ?? Environment.ProcessorCount,
            MaxConcurrencyPerLevel = options.MaxConcurrencyPerLevel,
            Name = Name,
            IdleSpinCount = options.IdleSpinCount,
            StallTimeout = options.StallTimeout,
            TimeSlice = options.TimeSlice,
            Policy = options.Policy,
        });

        // Nothing runs on the pool before InvokeAsync below, so subscribing now misses nothing.
        pool.UnhandledException += OnUnhandledException;
        pool.WorkDropped += OnWorkDropped;
        pool.StallDetected += OnStallDetected;
        _drops = new DropLog(_logger, Name, options.Levels, options.WorkDroppedLogInterval);
        _stoppingCts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        _pool = pool;
        _ = pool.Completion.ContinueWith(
            static (completion, state) => ((PriorityThreadPoolBackgroundService)state!).OnPoolStopped(completion),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);

        var running = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        CancellationToken stoppingToken = _stoppingCts.Token;
        Task execute = pool.InvokeAsync(
            () =>
            {
                running.TrySetResult();
                return ExecuteAsync(stoppingToken);
            },
            options.DefaultLevel);
        _ = execute.ContinueWith(
            static (task, state) => ((PriorityThreadPoolBackgroundService)state!).OnExecuteAsyncCompleted(task),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        Volatile.Write(ref _started, 1);

        // ExecuteAsync faulting before it signalled (InvokeAsync refused the work) must not leave StartAsync waiting forever.
        await Task.WhenAny(running.Task, execute).WaitAsync(cancellationToken).ConfigureAwait(false);
        Log.Started(_logger, Name, options.Levels, options.DefaultLevel);
    }

    /// <summary>
    /// Cancels the token given to <c>ExecuteAsync</c>, then waits for <c>ExecuteAsync</c> to return and for the pool to finish its
    /// queued work, until <paramref name="cancellationToken"/> (the host's shutdown timeout) is cancelled. Never throws for a fault of
    /// <c>ExecuteAsync</c> (the host learns of it through <see cref="ExecuteTask"/>).
    /// </summary>
    /// <param name="cancellationToken">Cancelled when the shutdown should no longer be graceful.</param>
    /// <returns>A task that completes when the worker has stopped or the wait was given up.</returns>
    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        PriorityThreadPool? pool = _pool;
        if (pool is null)
        {
            return;
        }

        try
        {
            _stoppingCts!.Cancel();
        }
        finally
        {
            Task stopped = Task.WhenAll(_execute.Task, pool.Completion);
            await stopped.WaitAsync(cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (stopped.IsCompleted)
            {
                Log.Stopped(_logger, Name);
            }
            else
            {
                Log.StopTimedOut(_logger, Name, PriorityBackgroundService.DescribePending(pool.GetSnapshot()));
                pool.Complete();
            }

            _drops!.Flush();
        }
    }

    /// <summary>Cancels the token given to <c>ExecuteAsync</c> and lets the pool end; does not wait.</summary>
    public override void Dispose()
    {
        _stoppingCts?.Cancel();
        _pool?.Complete();
        _drops?.Dispose();
        base.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Called by the registration before the host starts the worker.</summary>
    internal void Configure(string name, PriorityWorkerOptions options, ILogger logger)
    {
        if (_pool is not null)
        {
            throw new InvalidOperationException($"Worker {Name} is already started.");
        }

        _name = name;
        _options = options;
        _logger = logger;
    }

    private void OnExecuteAsyncCompleted(Task task)
    {
        Volatile.Write(ref _executeAsyncTask, task);
        if (task.Exception is { } fault)
        {
            _execute.TrySetException(fault.InnerExceptions);
        }

        _pool!.Complete();
    }

    private void OnPoolStopped(Task completion)
        => WorkerOutcome.SchedulerStopped(_execute, completion, Volatile.Read(ref _executeAsyncTask), _stoppingCts!.Token);

    private void OnUnhandledException(object? sender, PriorityUnhandledExceptionEventArgs e)
        => Log.UnhandledException(_logger, e.Exception, Name, e.Level);

    private void OnWorkDropped(object? sender, WorkDroppedEventArgs e) => _drops?.Record(e.Level);

    private void OnStallDetected(object? sender, StallDetectedEventArgs e)
    {
        // The health check sees the stall before anyone reads the log: mark first, then log.
        Volatile.Write(ref _stallMark, PriorityBackgroundService.Dispatched(_pool!.GetSnapshot()));
        Log.StallDetected(_logger, Name, e.Level, (long)e.WaitingFor.TotalMilliseconds, e.PendingCount, (long)e.StallTimeout.TotalMilliseconds);
    }
}
