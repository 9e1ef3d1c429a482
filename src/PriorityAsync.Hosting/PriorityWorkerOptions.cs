using System;
using System.Collections.Generic;

namespace PriorityAsync.Hosting;

/// <summary>
/// Settings of one priority worker registered with
/// <see cref="PriorityWorkerServiceCollectionExtensions.AddPriorityWorker{TWorker}(Microsoft.Extensions.DependencyInjection.IServiceCollection, string, Action{PriorityWorkerOptions}?)"/>.
/// Bound from the configuration section <c>PriorityAsync:Workers:&lt;name&gt;</c> and validated when the host starts.
/// </summary>
/// <remarks><para>The worker reads the values once, when it is created; changing them afterwards has no effect.</para>
/// <para>The settings every scheduler takes come from <see cref="PrioritySchedulerOptions"/> (keys <c>Levels</c>, <c>DefaultLevel</c>,
/// <c>IdleSpinCount</c>, <c>StallTimeout</c>, <c>TimeSlice</c>, <c>Name</c>; <see cref="PrioritySchedulerOptions.Policy"/> and
/// <see cref="PrioritySchedulerOptions.TimeProvider"/> are set in code). The scheduler is named after the worker unless
/// <see cref="PrioritySchedulerOptions.Name"/> is set, and its timers run on the <see cref="TimeProvider"/> registered in the container
/// (else the system clock) unless <see cref="PrioritySchedulerOptions.TimeProvider"/> is set to another provider than
/// <see cref="TimeProvider.System"/>.</para>
/// <para>The same options serve both kinds of worker. <see cref="ThreadCount"/> and <see cref="MaxConcurrencyPerLevel"/> apply to
/// <see cref="PriorityThreadPoolBackgroundService"/> only.</para></remarks>
public sealed class PriorityWorkerOptions : PrioritySchedulerOptions
{
    /// <summary>The configuration section that holds one subsection per worker, named after the worker: <c>PriorityAsync:Workers</c>.</summary>
    public const string WorkersSection = "PriorityAsync:Workers";

    /// <summary>The largest allowed value of <see cref="BacklogDegradedThreshold"/>.</summary>
    public const int MaxBacklogDegradedThreshold = int.MaxValue;

    /// <summary>The smallest allowed value of <see cref="WorkDroppedLogInterval"/>: 10 milliseconds.</summary>
    public static readonly TimeSpan MinWorkDroppedLogInterval = TimeSpan.FromMilliseconds(10);

    /// <summary>The largest allowed value of <see cref="WorkDroppedLogInterval"/>: one hour.</summary>
    public static readonly TimeSpan MaxWorkDroppedLogInterval = TimeSpan.FromHours(1);

    /// <summary>
    /// Gets or sets how many callbacks may wait at one level before the health check reports the worker degraded
    /// (key <c>BacklogDegradedThreshold</c>). <see langword="null"/> never reports a backlog.
    /// </summary>
    /// <value>The default value is <see langword="null"/> (off). Allowed: <see langword="null"/>, or from 1 to <see cref="int.MaxValue"/>.</value>
    public int? BacklogDegradedThreshold { get; set; }

    /// <summary>
    /// Gets or sets the shortest time between two <c>WorkDropped</c> warnings (key <c>WorkDroppedLogInterval</c>). The first drop is
    /// logged at once; drops within the interval after it are counted per level and logged together when it ends, and whatever is
    /// still counted when the worker stops is logged then.
    /// </summary>
    /// <value>The default value is 10 seconds. Allowed: 10 milliseconds to 1 hour.</value>
    public TimeSpan WorkDroppedLogInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Gets or sets the number of threads of a <see cref="PriorityThreadPoolBackgroundService"/>'s pool (key <c>ThreadCount</c>);
    /// <see langword="null"/> gives one per core. A <see cref="PriorityBackgroundService"/> ignores it: its loop is one thread.</summary>
    /// <value>The default value is <see langword="null"/> (<see cref="Environment.ProcessorCount"/>). Allowed: <see langword="null"/>, or
    /// from 1 to <see cref="PriorityThreadPoolOptions.MaxThreadCount"/> (256).</value>
    public int? ThreadCount { get; set; }

    /// <summary>Gets or sets, for a <see cref="PriorityThreadPoolBackgroundService"/>, how many of its threads may run each level's work at
    /// once (key <c>MaxConcurrencyPerLevel</c>, one value per level, lowest level first; see
    /// <see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/>). For example <c>[1, 2, 2]</c> on 2 threads keeps one thread free of
    /// bulk work at level 0. A <see cref="PriorityBackgroundService"/> ignores it.</summary>
    /// <value>The default value is <see langword="null"/> (no cap). Allowed: <see langword="null"/>, or exactly <see cref="PrioritySchedulerOptions.Levels"/> values,
    /// each from 1 to the thread count.</value>
    public IReadOnlyList<int>? MaxConcurrencyPerLevel { get; set; }
}

