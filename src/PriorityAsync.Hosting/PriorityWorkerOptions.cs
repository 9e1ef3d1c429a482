using System;
using System.Collections.Generic;

namespace PriorityAsync.Hosting;

/// <summary>
/// Settings of one priority worker registered with
/// <see cref="PriorityWorkerServiceCollectionExtensions.AddPriorityWorker{TWorker}(Microsoft.Extensions.DependencyInjection.IServiceCollection, string, Action{PriorityWorkerOptions}?)"/>.
/// Bound from the configuration section <c>PriorityAsync:Workers:&lt;name&gt;</c> and validated when the host starts.
/// </summary>
/// <remarks><para>The worker reads the values once, when it is created; changing them afterwards has no effect.</para>
/// <para>The same options serve both kinds of worker. <see cref="ThreadCount"/> and <see cref="MaxConcurrencyPerLevel"/> apply to
/// <see cref="PriorityThreadPoolBackgroundService"/> only.</para></remarks>
public sealed class PriorityWorkerOptions
{
    /// <summary>The configuration section that holds one subsection per worker, named after the worker: <c>PriorityAsync:Workers</c>.</summary>
    public const string WorkersSection = "PriorityAsync:Workers";

    /// <summary>The largest allowed value of <see cref="BacklogDegradedThreshold"/>.</summary>
    public const int MaxBacklogDegradedThreshold = int.MaxValue;

    /// <summary>The smallest allowed value of <see cref="WorkDroppedLogInterval"/>: 10 milliseconds.</summary>
    public static readonly TimeSpan MinWorkDroppedLogInterval = TimeSpan.FromMilliseconds(10);

    /// <summary>The largest allowed value of <see cref="WorkDroppedLogInterval"/>: one hour.</summary>
    public static readonly TimeSpan MaxWorkDroppedLogInterval = TimeSpan.FromHours(1);

    /// <summary>Gets or sets the number of priority levels of the worker's context (key <c>Levels</c>). A higher level runs first.</summary>
    /// <value>The default value is 3. Allowed: 1 to 64.</value>
    public int Levels { get; set; } = 3;

    /// <summary>Gets or sets the level at which <c>ExecuteAsync</c> starts (key <c>DefaultLevel</c>).</summary>
    /// <value>The default value is 0, the lowest level. Allowed: 0 to <c>Levels - 1</c>.</value>
    public int DefaultLevel { get; set; }

    /// <summary>
    /// Gets or sets how long the loop may start nothing while work waits before a stall is logged (event <c>StallDetected</c>) and the
    /// health check reports the worker unhealthy (key <c>StallTimeout</c>, for example <c>00:00:05</c>). <see langword="null"/> turns
    /// stall detection off.
    /// </summary>
    /// <value>The default value is 10 seconds (<see cref="PriorityContextOptions.DefaultStallTimeout"/>, the core's default too). Allowed:
    /// <see langword="null"/>, or from 10 milliseconds to 1 day.</value>
    public TimeSpan? StallTimeout { get; set; } = PriorityContextOptions.DefaultStallTimeout;

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

    /// <summary>Gets or sets how many times the idle loop checks for work before it parks its thread (key <c>IdleSpinCount</c>);
    /// see <see cref="PriorityContextOptions.IdleSpinCount"/>.</summary>
    /// <value>The default value is 20. Allowed: 0 to 10,000.</value>
    public int IdleSpinCount { get; set; } = 20;

    /// <summary>Gets or sets the time quota of one callback, after which <c>Checkpoint()</c> and <c>ShouldYield</c> ask it to yield when
    /// other work waits (key <c>TimeSlice</c>, for example <c>00:00:00.050</c>; empty turns the quota off); see
    /// <see cref="PriorityContextOptions.TimeSlice"/> (on the pool worker, per thread: <see cref="PriorityThreadPoolOptions.TimeSlice"/>).</summary>
    /// <value>The default value is <see cref="PriorityContextOptions.DefaultTimeSlice"/> (20 ms). Allowed: <see langword="null"/>, or from
    /// <see cref="PriorityContextOptions.MinTimeSlice"/> (1 ms) to <see cref="PriorityContextOptions.MaxTimeSlice"/> (1 minute).</value>
    public TimeSpan? TimeSlice { get; set; } = PriorityContextOptions.DefaultTimeSlice;

    /// <summary>Gets or sets how the worker's loop chooses between levels; see <see cref="PriorityContextOptions.Policy"/>. Set in code
    /// (<c>AddPriorityWorker&lt;Worker&gt;(o =&gt; o.Policy = PriorityPolicy.WeightedShares(1, 2, 4))</c>); configuration does not bind it.</summary>
    /// <value>The default value is <see cref="PriorityPolicy.Strict"/>. A policy with values per level must give exactly <see cref="Levels"/> of them.</value>
    public PriorityPolicy Policy { get; set; } = PriorityPolicy.Strict;

    /// <summary>Gets or sets the number of threads of a <see cref="PriorityThreadPoolBackgroundService"/>'s pool (key <c>ThreadCount</c>);
    /// <see langword="null"/> gives one per core. A <see cref="PriorityBackgroundService"/> ignores it: its loop is one thread.</summary>
    /// <value>The default value is <see langword="null"/> (<see cref="Environment.ProcessorCount"/>). Allowed: <see langword="null"/>, or
    /// from 1 to <see cref="PriorityThreadPoolOptions.MaxThreadCount"/> (256).</value>
    public int? ThreadCount { get; set; }

    /// <summary>Gets or sets, for a <see cref="PriorityThreadPoolBackgroundService"/>, how many of its threads may run each level's work at
    /// once (key <c>MaxConcurrencyPerLevel</c>, one value per level, lowest level first; see
    /// <see cref="PriorityThreadPoolOptions.MaxConcurrencyPerLevel"/>). For example <c>[1, 2, 2]</c> on 2 threads keeps one thread free of
    /// bulk work at level 0. A <see cref="PriorityBackgroundService"/> ignores it.</summary>
    /// <value>The default value is <see langword="null"/> (no cap). Allowed: <see langword="null"/>, or exactly <see cref="Levels"/> values,
    /// each from 1 to the thread count.</value>
    public IReadOnlyList<int>? MaxConcurrencyPerLevel { get; set; }
}
