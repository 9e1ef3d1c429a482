using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using MassTransit;
using MessageBus.RabbitMq;
using PriorityAsync;
using PriorityAsync.MassTransit;
using RabbitMQ.Client;
using RabbitMQ.Client.Events;

namespace RabbitMqConsumers;

/// <summary>
/// One consumer of the experiment, on a queue of its own: it does <c>work</c> of CPU per message and notes when the urgent one
/// (priority 9) starts. The kinds: RabbitMQ.Client's plain consumer, on a <see cref="PriorityContext"/> or a
/// <see cref="PriorityThreadPool"/>, and MassTransit's, plain or on a <see cref="PriorityContext"/>.
/// </summary>
public abstract class ConsumerUnderTest(TimeSpan work) : IAsyncDisposable
{
    private readonly TaskCompletionSource<long> _urgentStarted = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _handled;
    private volatile bool _stopping;

    /// <summary>The names of the kinds, in the order of the table.</summary>
    public static readonly string[] Kinds = ["client", "client-loop", "client-pool", "masstransit", "masstransit-loop"];

    /// <summary>When the urgent message's handler started (a <see cref="Stopwatch"/> timestamp).</summary>
    public Task<long> UrgentStarted => _urgentStarted.Task;

    /// <summary>Messages whose handler ran to its end (acknowledged or about to be).</summary>
    public long Handled => Interlocked.Read(ref _handled);

    public static ConsumerUnderTest Create(string kind, ConnectionFactory factory, TimeSpan work) => kind switch
    {
        "client" => new ClientConsumer(factory, work, null),
        "client-loop" => new ClientConsumer(factory, work, new PriorityContextThread(new PriorityContextOptions { Levels = 2 })),
        "client-pool" => new ClientConsumer(factory, work, null, new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = 2,
            ThreadCount = 2,
            MaxConcurrencyPerLevel = [1, 2], // one thread is always free of level-0 work
        })),
        "masstransit" => new MassTransitConsumer(factory, work, null),
        "masstransit-loop" => new MassTransitConsumer(factory, work, new PriorityContextThread(new PriorityContextOptions { Levels = 2 })),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, $"The kinds are {string.Join(", ", Kinds)}."),
    };

    /// <summary>Starts consuming from <paramref name="queue"/> (declared by <see cref="Rabbit.DeclareAsync"/>) with <paramref name="prefetch"/> unacknowledged at most.</summary>
    public abstract Task StartAsync(string queue, ushort prefetch);

    /// <summary>Stops doing the work: what is still queued is acknowledged at once, so that the consumer can be stopped quickly.</summary>
    public void Stop() => _stopping = true;

    public abstract ValueTask DisposeAsync();

    /// <summary>The handler's body, the same for every kind.</summary>
    protected void Handle(bool urgent)
    {
        if (urgent)
        {
            _urgentStarted.TrySetResult(Stopwatch.GetTimestamp());
        }

        if (!_stopping)
        {
            Rabbit.Spin(work);
        }

        Interlocked.Increment(ref _handled);
    }

    private sealed class ClientConsumer(ConnectionFactory factory, TimeSpan work, PriorityContextThread? loop, PriorityThreadPool? pool = null)
        : ConsumerUnderTest(work)
    {
        private IConnection? _connection;

        public override async Task StartAsync(string queue, ushort prefetch)
        {
            _connection = await RabbitMqConnection.ConnectAsync(factory, "RabbitMqConsumers client");
            IChannel channel = await _connection.CreateChannelAsync();
            await channel.BasicQosAsync(0, prefetch, global: false);
            PriorityScheduler? scheduler = (PriorityScheduler?)loop?.Context ?? pool;
            IAsyncBasicConsumer consumer;
            if (scheduler is null)
            {
                // The plain consumer: the client's dispatcher runs one delivery at a time, in arrival order.
                var plain = new AsyncEventingBasicConsumer(channel);
                plain.ReceivedAsync += async (_, e) =>
                {
                    Handle(e.BasicProperties.Priority == Rabbit.MaxPriority);
                    await channel.BasicAckAsync(e.DeliveryTag, multiple: false);
                };
                consumer = plain;
            }
            else
            {
                consumer = new PriorityConsumer(channel, scheduler, PriorityConsumer.LevelFromPriority(levels: 2, Rabbit.MaxPriority), d =>
                {
                    Handle(d.Properties.Priority == Rabbit.MaxPriority);
                    return Task.CompletedTask;
                });
            }

            await channel.BasicConsumeAsync(queue, autoAck: false, consumer);
        }

        public override async ValueTask DisposeAsync()
        {
            Stop();
            if (_connection is not null)
            {
                await _connection.CloseAsync();
                _connection.Dispose();
            }

            if (loop is not null)
            {
                await loop.DisposeAsync();
            }

            if (pool is not null)
            {
                await pool.DisposeAsync();
            }
        }
    }

    private sealed class MassTransitConsumer(ConnectionFactory factory, TimeSpan work, PriorityContextThread? loop) : ConsumerUnderTest(work)
    {
        private IBusControl? _bus;

        public override async Task StartAsync(string queue, ushort prefetch)
        {
            _bus = Bus.Factory.CreateUsingRabbitMq(cfg =>
            {
                cfg.Host(factory.HostName, (ushort)factory.Port, factory.VirtualHost, h =>
                {
                    h.Username(factory.UserName);
                    h.Password(factory.Password);
                });
                cfg.ReceiveEndpoint(queue, e =>
                {
                    e.PrefetchCount = prefetch;        // ConcurrentMessageLimit stays at its default: the prefetch count
                    e.SetQueueArgument("x-max-priority", (int)Rabbit.MaxPriority);
                    e.ConfigureConsumeTopology = false;
                    if (loop is not null)
                    {
                        // The level from RabbitMQ's priority property, as the RabbitMQ.Client consumers take it.
                        e.UsePriorityScheduler(loop.Context, o => o.LevelSelector = c =>
                            c.ReceiveContext.TryGetPayload(out RabbitMqBasicConsumeContext? rabbit)
                                ? PriorityConsumer.LevelOf(rabbit.Properties.Priority, levels: 2, Rabbit.MaxPriority)
                                : null);
                    }

                    e.Consumer(() => new JobConsumer(this));
                });
            });
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            await _bus.StartAsync(timeout.Token);
        }

        public override async ValueTask DisposeAsync()
        {
            Stop();
            if (_bus is not null)
            {
                await _bus.StopAsync();
            }

            if (loop is not null)
            {
                await loop.DisposeAsync();
            }
        }

        private sealed class JobConsumer(MassTransitConsumer owner) : IConsumer<Job>
        {
            public Task Consume(ConsumeContext<Job> context)
            {
                owner.Handle(context.Message.Urgent);
                return Task.CompletedTask;
            }
        }
    }
}

/// <summary>The MassTransit experiment's message.</summary>
/// <param name="Urgent">Whether it is the urgent one, published at priority 9.</param>
public sealed record Job(bool Urgent);
