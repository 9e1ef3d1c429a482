using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting.Internal;

namespace PriorityAsync.Hosting;

/// <summary>
/// Reports the health of every <see cref="PriorityBackgroundService"/> and <see cref="PriorityThreadPoolBackgroundService"/> among the
/// host's hosted services: unhealthy while a worker's scheduler (its loop, or its pool) is stalled (see
/// <see cref="PrioritySchedulerOptions.StallTimeout"/>) or after it or <c>ExecuteAsync</c> failed; degraded while a level's backlog is
/// above <see cref="PriorityWorkerOptions.BacklogDegradedThreshold"/>; healthy otherwise. The worst worker decides; the data carries
/// each worker's state and waiting work per level.
/// </summary>
/// <remarks>
/// <para>Register it with the health checks package: <c>services.AddHealthChecks().AddCheck&lt;PriorityWorkersHealthCheck&gt;("priority-workers")</c>.</para>
/// <para>A stall lasts from its report until the loop starts another item, or until no work waits. The check reads each loop's
/// counters (one small allocation per worker); it never touches the loop.</para>
/// </remarks>
public sealed class PriorityWorkersHealthCheck : IHealthCheck
{
    private readonly WorkerCore[] _workers;

    /// <summary>Initializes a new instance of the <see cref="PriorityWorkersHealthCheck"/> class.</summary>
    /// <param name="hostedServices">The host's hosted services; the priority workers among them are checked.</param>
    /// <exception cref="ArgumentNullException"><paramref name="hostedServices"/> is <see langword="null"/>.</exception>
    public PriorityWorkersHealthCheck(IEnumerable<IHostedService> hostedServices)
    {
        ArgumentNullException.ThrowIfNull(hostedServices);
        _workers = hostedServices.OfType<IPriorityWorker>().Select(worker => worker.Core).ToArray();
    }

    /// <summary>Checks every priority worker.</summary>
    /// <param name="context">The registration being checked; its failure status is used for unhealthy workers.</param>
    /// <param name="cancellationToken">Not used: the check never waits.</param>
    /// <returns>The worst status over all workers, with a description per worker that is not healthy.</returns>
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(context);
        HealthStatus worst = HealthStatus.Healthy;
        var problems = new List<string>();
        var data = new Dictionary<string, object>(StringComparer.Ordinal);
        foreach (WorkerCore worker in _workers)
        {
            (HealthStatus status, string state, int[] pending) = Check(worker, context.Registration?.FailureStatus ?? HealthStatus.Unhealthy);
            data[worker.Name] = state;
            data[worker.Name + ".pending"] = pending;
            if (status < HealthStatus.Healthy)
            {
                problems.Add($"{worker.Name}: {state}");
            }

            if (status < worst)
            {
                worst = status;
            }
        }

        string description = problems.Count == 0
            ? $"{_workers.Length} priority workers healthy."
            : string.Join("; ", problems);
        return Task.FromResult(new HealthCheckResult(worst, description, data: data));
    }

    private static (HealthStatus Status, string State, int[] Pending) Check(WorkerCore worker, HealthStatus failureStatus)
    {
        PriorityScheduler? scheduler = worker.SchedulerOrNull;
        if (scheduler is null)
        {
            return (HealthStatus.Healthy, "not started", []);
        }

        PrioritySchedulerSnapshot snapshot = scheduler.GetSnapshot();
        int[] pending = [.. snapshot.PendingPerLevel];
        if (snapshot.State == PrioritySchedulerState.Faulted)
        {
            return (failureStatus, "loop faulted", pending);
        }

        if (worker.ExecuteTask is { IsFaulted: true })
        {
            return (failureStatus, "ExecuteAsync failed", pending);
        }

        if (snapshot.State == PrioritySchedulerState.Completed)
        {
            return (HealthStatus.Healthy, "stopped", pending);
        }

        long stallMark = worker.StallMark;
        if (stallMark >= 0 && snapshot.TotalPending > 0 && WorkerCore.Dispatched(snapshot) == stallMark)
        {
            return (failureStatus, "stalled: the loop starts nothing while work waits", pending);
        }

        if (worker.Options.BacklogDegradedThreshold is { } threshold)
        {
            for (int level = pending.Length - 1; level >= 0; level--)
            {
                if (pending[level] > threshold)
                {
                    return (HealthStatus.Degraded, $"backlog: {pending[level]} callbacks waiting at level {level} (threshold {threshold})", pending);
                }
            }
        }

        return (HealthStatus.Healthy, "running", pending);
    }
}
