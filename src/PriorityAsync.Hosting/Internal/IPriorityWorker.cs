using System.Threading.Tasks;

namespace PriorityAsync.Hosting.Internal;

/// <summary>
/// What the health check reads from a priority worker, whichever scheduler runs it: <see cref="PriorityBackgroundService"/> (one
/// loop thread) or <see cref="PriorityThreadPoolBackgroundService"/> (a <see cref="PriorityThreadPool"/>). Every member may be read
/// from any thread at any time.
/// </summary>
internal interface IPriorityWorker
{
    string Name { get; }

    PriorityWorkerOptions Options { get; }

    /// <summary>The scheduler, once the worker was started; <see langword="null"/> before.</summary>
    IPriorityScheduler? SchedulerOrNull { get; }

    /// <summary>The number of items started when the last stall was reported, or -1 (none reported).</summary>
    long StallMark { get; }

    Task? ExecuteTask { get; }
}
