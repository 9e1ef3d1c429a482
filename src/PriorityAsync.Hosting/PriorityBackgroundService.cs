using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting.Internal;

namespace PriorityAsync.Hosting;

/// <summary>
/// A <see cref="BackgroundService"/> whose <see cref="BackgroundService.ExecuteAsync(CancellationToken)"/> runs on its own
/// <see cref="PriorityContextThread"/>, starting at <see cref="PrioritySchedulerOptions.DefaultLevel"/>: every <c>await</c> in it resumes
/// on that one thread, at the level it was running at, and <c>await Context.Prioritize(level)</c> moves work between levels.
/// </summary>
/// <remarks>
/// <para>Register it with <see cref="PriorityWorkerServiceCollectionExtensions.AddPriorityWorker{TWorker}(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{PriorityWorkerOptions}?)"/>
/// to get options from configuration, validation at start-up and logging; registered with plain <c>AddHostedService</c> it runs with the
/// default <see cref="PriorityWorkerOptions"/> and logs nothing.</para>
/// <para>The loop's timers (<see cref="Priority.Delay(TimeSpan, CancellationToken)"/>, <c>Context.TimeProvider</c>) run on the
/// <see cref="TimeProvider"/> registered in the host's services, or on <see cref="TimeProvider.System"/> when none is (or when the worker
/// was registered with plain <c>AddHostedService</c>): a test registers a <c>FakeTimeProvider</c> and advances it.</para>
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
    // The lifecycle is the one both workers share ([H-WORKER]); the core adds what is the loop's own.
    private readonly ContextWorkerCore _core;

    /// <summary>Initializes a new instance of the <see cref="PriorityBackgroundService"/> class.</summary>
    protected PriorityBackgroundService()
    {
        _core = new ContextWorkerCore(GetType(), ExecuteAsync);
    }

    /// <summary>Gets the worker's name: the name it was registered with, or its type's name.</summary>
    /// <remarks>It names the configuration section (<c>PriorityAsync:Workers:&lt;name&gt;</c>), the loop thread and every log message.</remarks>
    public string Name => _core.Name;

    /// <summary>Gets the task that completes when the worker is done: <see langword="null"/> before <see cref="StartAsync"/>; see the
    /// remarks of <see cref="PriorityBackgroundService"/> for when it faults.</summary>
    public override Task? ExecuteTask => _core.ExecuteTask;

    /// <summary>Gets the worker's priority context, whose loop runs <c>ExecuteAsync</c>.</summary>
    /// <exception cref="InvalidOperationException">The worker has not been started.</exception>
    protected PriorityContext Context => _core.ContextOrNull
        ?? throw new InvalidOperationException($"Worker {Name} has no priority context before StartAsync.");

    WorkerCore IPriorityWorker.Core => _core;

    /// <summary>Starts the worker's loop thread and <c>ExecuteAsync</c> on it; returns once the loop runs.</summary>
    /// <param name="cancellationToken">The host stopping while it starts: this returns at once, as BackgroundService's does; linked to ExecuteAsync's token.</param>
    /// <returns>A task that completes when the loop runs and <c>ExecuteAsync</c> was started on it.</returns>
    /// <exception cref="InvalidOperationException">The worker was already started.</exception>
    public override Task StartAsync(CancellationToken cancellationToken)
        => _core.StartAsync(nameof(PriorityBackgroundService), cancellationToken);

    /// <summary>
    /// Cancels the token given to <c>ExecuteAsync</c>, then waits for <c>ExecuteAsync</c> to return and for the loop to finish its
    /// queued work, until <paramref name="cancellationToken"/> (the host's shutdown timeout) is cancelled. Never throws for a fault of
    /// <c>ExecuteAsync</c> (the host learns of it through <see cref="ExecuteTask"/>).
    /// </summary>
    /// <param name="cancellationToken">Cancelled when the shutdown should no longer be graceful.</param>
    /// <returns>A task that completes when the worker has stopped or the wait was given up.</returns>
    public override Task StopAsync(CancellationToken cancellationToken) => _core.StopAsync(cancellationToken);

    /// <summary>Cancels the token given to <c>ExecuteAsync</c> and lets the loop end; does not wait.</summary>
    public override void Dispose()
    {
        _core.Dispose();
        base.Dispose();
        GC.SuppressFinalize(this);
    }
}
