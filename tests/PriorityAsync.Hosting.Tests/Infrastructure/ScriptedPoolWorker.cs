namespace PriorityAsync.Hosting.Tests.Infrastructure;

/// <summary>What a <see cref="ScriptedPoolWorker"/> runs as its ExecuteAsync.</summary>
public sealed class PoolWorkerScript(Func<ScriptedPoolWorker, CancellationToken, Task> body)
{
    public Func<ScriptedPoolWorker, CancellationToken, Task> Body { get; } = body;
}

/// <summary>A worker on a <see cref="PriorityThreadPool"/> whose ExecuteAsync is the test's script, and which exposes its pool.</summary>
public sealed class ScriptedPoolWorker(PoolWorkerScript script) : PriorityThreadPoolBackgroundService
{
    public PriorityThreadPool PriorityPool => Pool;

    protected override Task ExecuteAsync(CancellationToken stoppingToken) => script.Body(this, stoppingToken);
}
