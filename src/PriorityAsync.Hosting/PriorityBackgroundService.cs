using System;
using System.Globalization;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using PriorityAsync.Hosting.Internal;

namespace PriorityAsync.Hosting;

/// <summary>
/// A <see cref="BackgroundService"/> whose <see cref="BackgroundService.ExecuteAsync(CancellationToken)"/> runs on its own
/// <see cref="PriorityContextThread"/>, starting at <see cref="PriorityWorkerOptions.DefaultLevel"/>: every <c>await</c> in it resumes
/// on that one thread, at the level it was running at, and <c>await Context.Prioritize(level)</c> moves work between levels.
/// </summary>
/// <remarks>
/// <para>Register it with <see cref="PriorityWorkerServiceCollectionExtensions.AddPriorityWorker{TWorker}(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{PriorityWorkerOptions}?)"/>
/// to get options from configuration, validation at start-up and logging; registered with plain <c>AddHostedService</c> it runs with the
/// default <see cref="PriorityWorkerOptions"/> and logs nothing.</para>
/// <para><see cref="StartAsync"/> returns once the loop runs and <c>ExecuteAsync</c> was started on it. <see cref="StopAsync"/> cancels
/// the stopping token and waits, within the host's shutdown timeout, for <c>ExecuteAsync</c> to return and for the loop to finish the
/// work still queued (including <c>async void</c> work); if the timeout ends first it logs what is still waiting, per level.</para>
/// <para>Children started in the worker's root scope (<c>Context.Scope.Start(...)</c>, or <see cref="Priority.Start(Func{CancellationToken, Task})"/>)
/// belong to the worker: the stopping token cancels them (and so does <c>ExecuteAsync</c> ending with an exception), the worker stops
/// only when they have ended, and a child's exception faults <see cref="ExecuteTask"/> as one of <c>ExecuteAsync</c> would.</para>
/// <para>The host treats this service as any <see cref="BackgroundService"/>: if <c>ExecuteAsync</c> faults, or an exception escapes a
/// callback on the loop (which stops the loop), <see cref="ExecuteTask"/> faults and the host's <c>BackgroundServiceExceptionBehavior</c>
/// applies: <c>StopHost</c> (the default) stops the application, <c>Ignore</c> keeps it running without this worker.</para>
/// </remarks>
public abstract class PriorityBackgroundService : BackgroundService, IPriorityWorker
{
    // Lifecycle (read before changing anything below):
    //   StartAsync (once) creates the loop thread and posts the entry callback at DefaultLevel. The entry callback signals
    //   "running" (StartAsync then returns) and calls ExecuteAsync on the loop.
    //   When ExecuteAsync's task completes, the loop is completed: it still runs what is queued and waits for async void work,
    //   then stops. The loop cannot stop normally before that: the PriorityContextThread holds it open until Complete().
    //   Invariant: _execute (ExecuteTask) completes exactly once: it faults as soon as ExecuteAsync faults or the loop faults (the
    //   host must learn of a fault at once, and a faulted loop never resumes ExecuteAsync); otherwise it completes with
    //   ExecuteAsync's outcome once ExecuteAsync has completed and the loop has stopped. If the loop is completed from outside
    //   (shutdown timeout, Dispose) while ExecuteAsync is still pending, its continuations are dropped and _execute is cancelled.
    //   _executeAsyncTask is written (volatile) before Complete() is called, so the loop's completion continuation, which can only
    //   run after Complete(), sees it unless the loop was completed from outside.

    private readonly TaskCompletionSource _execute = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private PriorityWorkerOptions _options = new();
    private ILogger _logger = NullLogger.Instance;
    private string? _name;
    private PriorityContextThread? _thread;
    private CancellationTokenSource? _stoppingCts;
    private DropLog? _drops;
    private Task? _executeAsyncTask;
    private int _started;

    // The number of items the loop had started when the last stall was reported, or -1 (no stall reported). Written by the
    // watchdog's thread, read by the health check: the stall lasts while this count has not moved and work is waiting.
    private long _stallMark = -1;

    /// <summary>Initializes a new instance of the <see cref="PriorityBackgroundService"/> class.</summary>
    protected PriorityBackgroundService()
    {
    }

    /// <summary>Gets the worker's name: the name it was registered with, or its type's name.</summary>
    /// <remarks>It names the configuration section (<c>PriorityAsync:Workers:&lt;name&gt;</c>), the loop thread and every log message.</remarks>
    public string Name => _name ?? GetType().Name;

    /// <summary>Gets the task that completes when the worker is done: <see langword="null"/> before <see cref="StartAsync"/>; see the
    /// remarks of <see cref="PriorityBackgroundService"/> for when it faults.</summary>
    public override Task? ExecuteTask => Volatile.Read(ref _started) == 0 ? null : _execute.Task;

    /// <summary>Gets the worker's priority context, whose loop runs <c>ExecuteAsync</c>.</summary>
    /// <exception cref="InvalidOperationException">The worker has not been started.</exception>
    protected PriorityContext Context => _thread?.Context
        ?? throw new InvalidOperationException($"Worker {Name} has no priority context before StartAsync.");

    internal PriorityWorkerOptions Options => _options;

    internal PriorityContext? ContextOrNull => _thread?.Context;

    PriorityWorkerOptions IPriorityWorker.Options => _options;

    IPriorityScheduler? IPriorityWorker.SchedulerOrNull => _thread?.Context;

    long IPriorityWorker.StallMark => StallMark;

    internal long StallMark => Volatile.Read(ref _stallMark);

    /// <summary>Starts the worker's loop thread and <c>ExecuteAsync</c> on it; returns once the loop runs.</summary>
    /// <param name="cancellationToken">Aborts the start; also linked to the token given to <c>ExecuteAsync</c>.</param>
    /// <returns>A task that completes when the loop runs and <c>ExecuteAsync</c> was started on it.</returns>
    /// <exception cref="InvalidOperationException">The worker was already started.</exception>
    public override async Task StartAsync(CancellationToken cancellationToken)
    {
        if (_thread is not null)
        {
            throw new InvalidOperationException($"Worker {Name} was already started; a PriorityBackgroundService starts once.");
        }

        PriorityWorkerOptions options = _options;
        var thread = new PriorityContextThread(new PriorityContextOptions
        {
            Levels = options.Levels,
            DefaultLevel = options.DefaultLevel,
            Name = Name,
            IdleSpinCount = options.IdleSpinCount,
            StallTimeout = options.StallTimeout,
            TimeSlice = options.TimeSlice,
            Policy = options.Policy,
        });

        // No callback can drop, stall or throw before the entry callback is posted below, so subscribing now misses nothing.
        thread.UnhandledException += OnUnhandledException;
        thread.Context.WorkDropped += OnWorkDropped;
        thread.Context.StallDetected += OnStallDetected;
        _drops = new DropLog(_logger, Name, options.Levels, options.WorkDroppedLogInterval);
        _stoppingCts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        // Stopping cancels the worker's children (Context.Scope, Priority.Start); the loop still waits for them.
        _stoppingCts.Token.UnsafeRegister(static scope => ((TaskScope)scope!).Cancel(), thread.Context.Scope);
        _thread = thread;

        var running = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _ = thread.Completion.ContinueWith(
            static (completion, state) => ((PriorityBackgroundService)state!).OnLoopStopped(completion),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        thread.Context.GetSynchronizationContext(options.DefaultLevel).Post(
            static state =>
            {
                var (worker, running) = ((PriorityBackgroundService, TaskCompletionSource))state!;
                worker.RunEntry(running);
            },
            (this, running));
        Volatile.Write(ref _started, 1);

        await running.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        Log.Started(_logger, Name, options.Levels, options.DefaultLevel);
    }

    /// <summary>
    /// Cancels the token given to <c>ExecuteAsync</c>, then waits for <c>ExecuteAsync</c> to return and for the loop to finish its
    /// queued work, until <paramref name="cancellationToken"/> (the host's shutdown timeout) is cancelled. Never throws for a fault of
    /// <c>ExecuteAsync</c> (the host learns of it through <see cref="ExecuteTask"/>).
    /// </summary>
    /// <param name="cancellationToken">Cancelled when the shutdown should no longer be graceful.</param>
    /// <returns>A task that completes when the worker has stopped or the wait was given up.</returns>
    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        PriorityContextThread? thread = _thread;
        if (thread is null)
        {
            return;
        }

        try
        {
            _stoppingCts!.Cancel();
        }
        finally
        {
            Task stopped = Task.WhenAll(_execute.Task, thread.Completion);
            await stopped.WaitAsync(cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (stopped.IsCompleted)
            {
                Log.Stopped(_logger, Name);
            }
            else
            {
                Log.StopTimedOut(_logger, Name, DescribePending(thread.Context.GetSnapshot()));
                thread.Complete();
            }

            _drops!.Flush();
        }
    }

    /// <summary>Cancels the token given to <c>ExecuteAsync</c> and lets the loop end; does not wait.</summary>
    public override void Dispose()
    {
        _stoppingCts?.Cancel();
        _thread?.Complete();
        _drops?.Dispose();
        base.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Called by the registration before the host starts the worker.</summary>
    internal void Configure(string name, PriorityWorkerOptions options, ILogger logger)
    {
        if (_thread is not null)
        {
            throw new InvalidOperationException($"Worker {Name} is already started.");
        }

        _name = name;
        _options = options;
        _logger = logger;
    }

    internal static string DescribePending(PriorityContextSnapshot snapshot)
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

    private void RunEntry(TaskCompletionSource running)
    {
        running.TrySetResult();
        Task task;
        try
        {
            task = ExecuteAsync(_stoppingCts!.Token);
        }
        catch (Exception ex)
        {
            task = Task.FromException(ex);
        }

        _ = task.ContinueWith(
            static (task, state) => ((PriorityBackgroundService)state!).OnExecuteAsyncCompleted(task),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    private void OnExecuteAsyncCompleted(Task task)
    {
        Volatile.Write(ref _executeAsyncTask, task);
        if (task.Exception is { } fault)
        {
            _execute.TrySetException(fault.InnerExceptions);
        }

        // ExecuteAsync is the root scope's body: a fault or a cancellation cancels the children; the loop still waits for them.
        if (!task.IsCompletedSuccessfully)
        {
            _thread!.Context.Scope.Cancel();
        }

        _thread!.Complete();
    }

    private void OnLoopStopped(Task completion)
        => WorkerOutcome.SchedulerStopped(_execute, completion, Volatile.Read(ref _executeAsyncTask), _stoppingCts!.Token);

    private void OnUnhandledException(object? sender, PriorityUnhandledExceptionEventArgs e)
        => Log.UnhandledException(_logger, e.Exception, Name, e.Level);

    private void OnWorkDropped(object? sender, WorkDroppedEventArgs e) => _drops?.Record(e.Level);

    private void OnStallDetected(object? sender, StallDetectedEventArgs e)
    {
        // The health check sees the stall before anyone reads the log: mark first, then log.
        Volatile.Write(ref _stallMark, Dispatched(_thread!.Context.GetSnapshot()));
        Log.StallDetected(_logger, Name, e.Level, (long)e.WaitingFor.TotalMilliseconds, e.PendingCount, (long)e.StallTimeout.TotalMilliseconds);
    }

    internal static long Dispatched(PriorityContextSnapshot snapshot)
    {
        long total = 0;
        foreach (long count in snapshot.RunPerLevel)
        {
            total += count;
        }

        return total;
    }
}
