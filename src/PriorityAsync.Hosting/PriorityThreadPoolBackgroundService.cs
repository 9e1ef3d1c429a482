using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting.Internal;

namespace PriorityAsync.Hosting;

/// <summary>
/// A <see cref="BackgroundService"/> whose <see cref="BackgroundService.ExecuteAsync(CancellationToken)"/> runs on its own
/// <see cref="PriorityThreadPool"/> (<see cref="PriorityWorkerOptions.ThreadCount"/> threads, one per core by default), starting at
/// <see cref="PrioritySchedulerOptions.DefaultLevel"/>: every <c>await</c> in it resumes on one of the pool's threads at the level it was
/// running at, and <c>await Priority.Prioritize(level)</c> moves work between levels. Work at several levels and of several messages
/// runs on several cores at once: the worker's code must be thread-safe (use <see cref="PriorityBackgroundService"/> for one thread
/// and no locks).
/// </summary>
/// <remarks>
/// <para>Register it with <see cref="PriorityWorkerServiceCollectionExtensions.AddPriorityThreadPoolWorker{TWorker}(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{PriorityWorkerOptions}?)"/>
/// to get options from configuration (the same <see cref="PriorityWorkerOptions"/> as the single-threaded worker), validation at
/// start-up, logging and the health check (<see cref="PriorityWorkersHealthCheck"/>); registered with plain <c>AddHostedService</c> it
/// runs with the default options and logs nothing.</para>
/// <para>The pool's timers (<see cref="Priority.Delay(TimeSpan, CancellationToken)"/>, <c>Pool.TimeProvider</c>) run on the
/// <see cref="TimeProvider"/> registered in the host's services, or on <see cref="TimeProvider.System"/> when none is (or when the worker
/// was registered with plain <c>AddHostedService</c>): a test registers a <c>FakeTimeProvider</c> and advances it.</para>
/// <para><see cref="StartAsync"/> returns once the pool runs and <c>ExecuteAsync</c> was started on it. <see cref="StopAsync"/> cancels
/// the stopping token and waits, within the host's shutdown timeout, for <c>ExecuteAsync</c> to return and for the pool to finish the
/// work still queued and its outstanding operations (<c>async void</c> work, <c>Priority.Start</c> children); if the timeout ends
/// first it logs what is still waiting, per level.</para>
/// <para>Children started on the pool with <see cref="Priority.Start(Func{CancellationToken, Task})"/> belong to the worker, as the
/// root scope's do on <see cref="PriorityBackgroundService"/>: the stopping token cancels the token they were given (and so does
/// <c>ExecuteAsync</c> ending with an exception or a cancellation, or a child's own fault), the worker stops only when they have
/// ended, and a child's exception faults <see cref="ExecuteTask"/>.</para>
/// <para>The host treats it as any <see cref="BackgroundService"/>: if <c>ExecuteAsync</c> faults, or an exception escapes a callback
/// on the pool (which stops the pool), <see cref="ExecuteTask"/> faults and the host's <c>BackgroundServiceExceptionBehavior</c>
/// applies.</para>
/// </remarks>
public abstract class PriorityThreadPoolBackgroundService : BackgroundService, IPriorityWorker
{
    // The lifecycle is the one both workers share ([H-WORKER]); the core adds what is the pool's own.
    private readonly PoolWorkerCore _core;

    /// <summary>Initializes a new instance of the <see cref="PriorityThreadPoolBackgroundService"/> class.</summary>
    protected PriorityThreadPoolBackgroundService()
    {
        _core = new PoolWorkerCore(GetType(), ExecuteAsync);
    }

    /// <summary>Gets the worker's name: the name it was registered with, or its type's name.</summary>
    /// <remarks>It names the configuration section (<c>PriorityAsync:Workers:&lt;name&gt;</c>), the pool's threads and every log message.</remarks>
    public string Name => _core.Name;

    /// <summary>Gets the task that completes when the worker is done: <see langword="null"/> before <see cref="StartAsync"/>; see the
    /// remarks of <see cref="PriorityThreadPoolBackgroundService"/> for when it faults.</summary>
    public override Task? ExecuteTask => _core.ExecuteTask;

    /// <summary>Gets the worker's pool, whose threads run <c>ExecuteAsync</c>.</summary>
    /// <exception cref="InvalidOperationException">The worker has not been started.</exception>
    protected PriorityThreadPool Pool => _core.PoolOrNull
        ?? throw new InvalidOperationException($"Worker {Name} has no PriorityThreadPool before StartAsync.");

    WorkerCore IPriorityWorker.Core => _core;

    /// <summary>Starts the worker's pool and <c>ExecuteAsync</c> on it; returns once <c>ExecuteAsync</c> was started.</summary>
    /// <param name="cancellationToken">The host stopping while it starts: this returns at once, as BackgroundService's does; linked to ExecuteAsync's token.</param>
    /// <returns>A task that completes when <c>ExecuteAsync</c> was started on the pool.</returns>
    /// <exception cref="InvalidOperationException">The worker was already started.</exception>
    public override Task StartAsync(CancellationToken cancellationToken)
        => _core.StartAsync(nameof(PriorityThreadPoolBackgroundService), cancellationToken);

    /// <summary>
    /// Cancels the token given to <c>ExecuteAsync</c> and to the pool's <c>Priority.Start</c> children, then waits for
    /// <c>ExecuteAsync</c> to return and for the pool to finish its queued work and its children, until
    /// <paramref name="cancellationToken"/> (the host's shutdown timeout) is cancelled. Never throws for a fault of <c>ExecuteAsync</c>
    /// (the host learns of it through <see cref="ExecuteTask"/>).
    /// </summary>
    /// <param name="cancellationToken">Cancelled when the shutdown should no longer be graceful.</param>
    /// <returns>A task that completes when the worker has stopped or the wait was given up.</returns>
    public override Task StopAsync(CancellationToken cancellationToken) => _core.StopAsync(cancellationToken);

    /// <summary>Cancels the token given to <c>ExecuteAsync</c> and lets the pool end; does not wait.</summary>
    public override void Dispose()
    {
        _core.Dispose();
        base.Dispose();
        GC.SuppressFinalize(this);
    }
}
