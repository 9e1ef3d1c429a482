using MassTransit;
using TestSupport.RabbitMq;

namespace PriorityAsync.MassTransit.Tests;

public sealed class PriorityConsumeConfigurationExtensionsTests
{
    private const string LevelHeader = "priority-level";

    [RabbitMqFact]
    public Task UsePriorityScheduler_OnALoop_ConsumerStaysAtItsLevelAcrossItsAwaits() =>
        StaysAtLevelAsync(new PriorityContextThread(new PriorityContextOptions { Levels = 3 }).Context);

    [RabbitMqFact]
    public Task UsePriorityScheduler_OnAPool_ConsumerStaysAtItsLevelAcrossItsAwaits() =>
        StaysAtLevelAsync(new PriorityThreadPool(new PriorityThreadPoolOptions { Levels = 3, ThreadCount = 2 }));

    [RabbitMqFact]
    public async Task UsePriorityScheduler_UserFilterAwaitsWithConfigureAwaitFalseBeforeTheConsumer_ConsumerStillStartsOnTheScheduler()
    {
        await using var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        var recorder = new Recorder(thread.Context);
        await using (TestBus bus = await TestBus.StartAsync(
            recorder,
            e => e.UsePriorityScheduler(thread.Context, o => o.DefaultLevel = 1),
            consumer => consumer.UseFilter(new ConfigureAwaitFalseFilter<ConsumerConsumeContext<ProbeConsumer>>())))
        {
            await bus.SendAsync(new Work(1));
            await recorder.WaitForAsync(1);
        }

        Observation seen = recorder.Observations.Single();
        seen.StartLevel.Should().Be(1, "the hop is the last filter before the consumer, after the user's");
        seen.OnSchedulerAtLevel.Should().AllBeEquivalentTo(true);
    }

    /// <summary>
    /// Why the package hops last: moved onto the scheduler at the endpoint's front, the pipe leaves it again at the first filter
    /// that awaits I/O with ConfigureAwait(false), and the consumer starts on the thread pool, at no level.
    /// </summary>
    [RabbitMqFact]
    public async Task HopAtTheEndpointsFront_UserFilterAwaitsWithConfigureAwaitFalse_ConsumerStartsOffTheScheduler()
    {
        await using var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        var recorder = new Recorder(thread.Context);
        await using (TestBus bus = await TestBus.StartAsync(
            recorder,
            e => e.UseFilter(new EndpointHopFilter(thread.Context, level: 1)),
            consumer => consumer.UseFilter(new ConfigureAwaitFalseFilter<ConsumerConsumeContext<ProbeConsumer>>())))
        {
            await bus.SendAsync(new Work(1));
            await recorder.WaitForAsync(1);
        }

        recorder.Observations.Single().StartLevel.Should().BeNull();
    }

    [RabbitMqFact]
    public async Task UsePriorityScheduler_LevelRules_DelegateThenHeaderThenTypeThenDefault()
    {
        await using var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        var recorder = new Recorder(thread.Context);
        await using (TestBus bus = await TestBus.StartAsync(recorder, e => e.UsePriorityScheduler(thread.Context, o =>
        {
            o.LevelSelector = c => c.Headers.Get<string>("tenant") == "vip" ? 2 : null;
            o.LevelHeader = LevelHeader;
            o.MessageLevel<Alarm>(2);
            o.DefaultLevel = 0;
        })))
        {
            await bus.SendAsync(new Work(1));                                                         // default
            await bus.SendAsync(new Work(2), c => c.Headers.Set(LevelHeader, 1));                     // header
            await bus.SendAsync(new Work(3), c => c.Headers.Set(LevelHeader, "7"));                   // header, clamped to the top
            await bus.SendAsync(new Work(4), c => c.Headers.Set(LevelHeader, "high"));                // not a level: the next rule
            await bus.SendAsync(new Alarm(5));                                                        // type
            await bus.SendAsync(new Alarm(6), c => c.Headers.Set(LevelHeader, 0));                    // the header before the type
            await bus.SendAsync(new Work(7), c => { c.Headers.Set("tenant", "vip"); c.Headers.Set(LevelHeader, 0); }); // the delegate first
            await recorder.WaitForAsync(7);
        }

        recorder.Observations.OrderBy(o => o.Id).Select(o => o.StartLevel).Should().Equal(0, 1, 2, 0, 2, 0, 2);
        recorder.Observations.Should().OnlyContain(o => o.OnSchedulerAtLevel.All(on => on));
    }

    /// <summary>
    /// The promise: a message at a higher level overtakes the messages already delivered and waiting on the scheduler. The loop is held
    /// until every delivery has reached it, so the order is decided by the levels alone, at any machine load.
    /// </summary>
    [RabbitMqFact]
    public async Task UsePriorityScheduler_UrgentMessageArrivesBehindQueuedWork_RunsFirst()
    {
        await using var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        PriorityContext loop = thread.Context;
        var recorder = new Recorder(loop);
        using var release = new ManualResetEventSlim();
        await using (TestBus bus = await TestBus.StartAsync(recorder, e =>
        {
            e.PrefetchCount = 16;
            e.UsePriorityScheduler(loop, o => o.LevelHeader = LevelHeader);
        }))
        {
            Task held = loop.InvokeAsync(() =>
            {
#pragma warning disable PA0002 // the test holds the loop on purpose, until every delivery waits on it
                release.Wait(TestBroker.Patience);
#pragma warning restore PA0002
                return Task.CompletedTask;
            }, level: 2);
            for (int id = 1; id <= 5; id++)
            {
                await bus.SendAsync(new Work(id), c => c.Headers.Set(LevelHeader, 0));
            }

            await bus.SendAsync(new Work(6), c => c.Headers.Set(LevelHeader, 2));
            using (var timeout = new CancellationTokenSource(TestBroker.Patience))
            {
                while (loop.GetSnapshot().TotalPending < 6)
                {
                    await Task.Delay(10, timeout.Token);
                }
            }

            release.Set();
            await held;
            await recorder.WaitForAsync(6);
        }

        // MassTransit dispatches the prefetch concurrently (up to ConcurrentMessageLimit), so messages of one level reach the loop in
        // any order; the level decides who goes first.
        recorder.Starts.Select(s => s.Id).First().Should().Be(6);
        recorder.Starts.Select(s => s.Id).Should().BeEquivalentTo([1, 2, 3, 4, 5, 6]);
    }

    [Fact]
    public void UsePriorityScheduler_LevelOutsideTheSchedulers_ThrowsNamingTheValueAndTheRange()
    {
        using var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        Action defaultLevel = () => Configure(o => o.DefaultLevel = 3);
        Action messageLevel = () => Configure(o => o.MessageLevel<Alarm>(-1));
        Action header = () => Configure(o => o.LevelHeader = " ");

        defaultLevel.Should().Throw<ArgumentOutOfRangeException>().WithMessage("DefaultLevel is 3; the scheduler's levels are 0 to 2.*");
        messageLevel.Should().Throw<ArgumentOutOfRangeException>().WithMessage("MessageLevel<Alarm> is -1; the scheduler's levels are 0 to 2.*");
        header.Should().Throw<ArgumentException>().WithMessage("LevelHeader is empty*");

        void Configure(Action<PriorityConsumeOptions> options) =>
            Bus.Factory.CreateUsingInMemory(cfg => cfg.ReceiveEndpoint("q", e => e.UsePriorityScheduler(thread.Context, options)));
    }

    private static async Task StaysAtLevelAsync(PriorityScheduler scheduler)
    {
        var recorder = new Recorder(scheduler);
        await using (TestBus bus = await TestBus.StartAsync(recorder, e => e.UsePriorityScheduler(scheduler, o => o.LevelHeader = LevelHeader)))
        {
            await bus.SendAsync(new Work(1), c => c.Headers.Set(LevelHeader, 1));
            await bus.SendAsync(new Work(2), c => c.Headers.Set(LevelHeader, 2));
            await recorder.WaitForAsync(2);
        }

        recorder.Observations.OrderBy(o => o.Id).Select(o => o.StartLevel).Should().Equal(1, 2);
        recorder.Observations.Should().OnlyContain(o => o.OnSchedulerAtLevel.Count == 3 && o.OnSchedulerAtLevel.All(on => on));
        if (scheduler is IAsyncDisposable disposable)
        {
            await disposable.DisposeAsync();
        }
    }
}
