namespace PriorityAsync.Hosting.Tests.Infrastructure;

/// <summary>What a <see cref="ScriptedWorker"/> runs as its ExecuteAsync; registered in the container so each test writes its own.</summary>
public sealed class WorkerScript(Func<ScriptedWorker, CancellationToken, Task> body)
{
    public Func<ScriptedWorker, CancellationToken, Task> Body { get; } = body;
}

/// <summary>A priority worker whose ExecuteAsync is the test's script, and which exposes its context to the test.</summary>
public sealed class ScriptedWorker(WorkerScript script) : PriorityBackgroundService
{
    public PriorityContext PriorityContext => Context;

    protected override Task ExecuteAsync(CancellationToken stoppingToken) => script.Body(this, stoppingToken);
}
