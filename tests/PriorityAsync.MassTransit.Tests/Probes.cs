using System.Collections.Concurrent;
using MassTransit;

namespace PriorityAsync.MassTransit.Tests;

/// <summary>A message of the tests; <see cref="Id"/> tells the deliveries apart.</summary>
public sealed record Work(int Id);

/// <summary>A second message type, for the level chosen by type.</summary>
public sealed record Alarm(int Id);

/// <summary>What one consumer call saw: its level when it started, and whether it was on the scheduler at that level after each await.</summary>
public sealed record Observation(string Kind, int Id, int? StartLevel, IReadOnlyList<bool> OnSchedulerAtLevel);

/// <summary>Records, in start order, what each consumer call saw; the test reads it.</summary>
public sealed class Recorder
{
    private readonly ConcurrentQueue<Observation> _observations = new();
    private readonly ConcurrentQueue<(string Kind, int Id)> _starts = new();

    public Recorder(PriorityScheduler scheduler) => Scheduler = scheduler;

    public PriorityScheduler Scheduler { get; }

    public IReadOnlyList<Observation> Observations => [.. _observations];

    public IReadOnlyList<(string Kind, int Id)> Starts => [.. _starts];

    public void Started(string kind, int id) => _starts.Enqueue((kind, id));

    public void Add(Observation observation) => _observations.Enqueue(observation);

    /// <summary>The level the caller runs at, if it runs on <see cref="Scheduler"/> (in its level's context, or in the context of a
    /// flow of work it started: the consumer's own, which a waiter can raise); else null.</summary>
    public int? CurrentLevel() => Priority.CurrentScheduler == Scheduler ? Priority.CurrentLevel : null;

    public async Task WaitForAsync(int count)
    {
        using var timeout = new CancellationTokenSource(TestSupport.RabbitMq.TestBroker.Patience);
        while (_observations.Count < count)
        {
            await Task.Delay(10, timeout.Token);
        }
    }
}

/// <summary>
/// A consumer that awaits what consumers await: a pool timer, MassTransit's own publish (ConfigureAwait(false) all the way down,
/// and a real round trip to the broker), a yield; after each it notes whether it is still on the scheduler at the level it started at.
/// </summary>
public sealed class ProbeConsumer(Recorder recorder) : IConsumer<Work>, IConsumer<Alarm>
{
    public Task Consume(ConsumeContext<Work> context) => ProbeAsync("work", context.Message.Id, context);

    public Task Consume(ConsumeContext<Alarm> context) => ProbeAsync("alarm", context.Message.Id, context);

    private async Task ProbeAsync(string kind, int id, ConsumeContext context)
    {
        recorder.Started(kind, id);
        int? level = recorder.CurrentLevel();
        var seen = new List<bool>();
        await Task.Delay(1);
        seen.Add(level is not null && recorder.CurrentLevel() == level);
        await context.Publish(new Echo(id));
        seen.Add(level is not null && recorder.CurrentLevel() == level);
        await Task.Yield();
        seen.Add(level is not null && recorder.CurrentLevel() == level);
        recorder.Add(new Observation(kind, id, level, seen));
    }
}

/// <summary>What <see cref="ProbeConsumer"/> publishes: MassTransit's own I/O inside the consumer.</summary>
public sealed record Echo(int Id);

/// <summary>
/// A filter of the user's, configured on the consumer, that awaits I/O with <c>ConfigureAwait(false)</c> before it calls the
/// consumer, as a transactional outbox's inbox lookup does: after it the pipe goes on on the thread pool.
/// </summary>
public sealed class ConfigureAwaitFalseFilter<T> : IFilter<T>
    where T : class, PipeContext
{
    public async Task Send(T context, IPipe<T> next)
    {
        await Task.Delay(5).ConfigureAwait(false);
        await next.Send(context).ConfigureAwait(false);
    }

    public void Probe(ProbeContext context) => context.CreateFilterScope("configureAwaitFalse");
}

/// <summary>The naive hop the package does not make: a filter at the endpoint's front that moves the whole pipe onto the scheduler.</summary>
public sealed class EndpointHopFilter(PriorityScheduler scheduler, int level) : IFilter<ConsumeContext>
{
    public Task Send(ConsumeContext context, IPipe<ConsumeContext> next) => scheduler.InvokeAsync(() => next.Send(context), level);

    public void Probe(ProbeContext context) => context.CreateFilterScope("endpointHop");
}
