namespace PriorityAsync.Hosting.Internal;

/// <summary>
/// A priority worker, whichever scheduler runs it: <see cref="PriorityBackgroundService"/> (one loop thread) or
/// <see cref="PriorityThreadPoolBackgroundService"/> (a <see cref="PriorityThreadPool"/>). The registration configures it and the
/// health check reads it through its <see cref="Core"/>, whose members may be read from any thread at any time.
/// </summary>
internal interface IPriorityWorker
{
    /// <summary>The worker's name (<see cref="WorkerCore.Name"/>); implemented by the workers' public <c>Name</c>.</summary>
    string Name { get; }

    /// <summary>The worker's lifecycle, shared by both kinds of worker.</summary>
    WorkerCore Core { get; }
}
