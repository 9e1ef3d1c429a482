using Azure.Messaging.ServiceBus;
using PriorityAsync;
using ServiceBusRecipe;

namespace ServiceBusRecipe.Tests;

/// <summary>
/// The recipe's handler (<see cref="LockKeeping.HandleAsync"/>) with the SDK's own <see cref="ProcessMessageEventArgs"/>, over a
/// <see cref="ServiceBusReceiver"/> that stands in for the service: it keeps each message's lock on the loop's virtual clock, as the
/// service keeps it on its own, and refuses a renewal or a completion that comes after the lock ran out. The CPU work moves the
/// virtual clock, so the outcome is exact at any machine load.
/// </summary>
public sealed class LockKeepingTests
{
    private static readonly TimeSpan s_lockDuration = TimeSpan.FromMinutes(1); // the service's default
    private static readonly TimeSpan s_slice = TimeSpan.FromSeconds(5);         // CPU work between two checkpoints

    [Fact]
    public async Task HandleAsync_EightMessagesOfCpuWorkOnOneLoop_EveryLockKeptAndEveryMessageCompleted()
    {
        (FakeReceiver receiver, TimeSpan elapsed) = await RunAsync(checkpoints: true);

        receiver.LocksLost.Should().Be(0);
        receiver.Completed.Should().Be(8);
        receiver.Renewals.Should().BeGreaterThan(8 * 2, "each message's lock was renewed throughout its processing");
        elapsed.Should().BeGreaterThanOrEqualTo(TimeSpan.FromMinutes(8 * 2.5), "eight messages of 150 s of CPU each, one after another, far beyond one lock");
    }

    /// <summary>The same handler over work without checkpoints: a keeper cannot preempt it, and the locks of the messages waiting behind it run out.</summary>
    [Fact]
    public async Task HandleAsync_CpuWorkWithoutCheckpoints_LocksAreLost()
    {
        (FakeReceiver receiver, _) = await RunAsync(checkpoints: false);

        receiver.LocksLost.Should().BeGreaterThan(0);
    }

    private static async Task<(FakeReceiver Receiver, TimeSpan Elapsed)> RunAsync(bool checkpoints)
    {
        var clock = new VirtualTimeProvider();
        await using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, TimeProvider = clock });
        var receiver = new FakeReceiver(clock, s_lockDuration);
        ProcessMessageEventArgs[] messages = [.. Enumerable.Range(1, 8).Select(i => new ProcessMessageEventArgs(receiver.Deliver($"m{i}"), receiver, CancellationToken.None))];

        // As the processor hands them over: all eight at once (MaxConcurrentCalls = 8), each onto the loop at level 2, as the recipe
        // does. Queued from the loop in one item, so that none starts (and moves the virtual clock) before all have arrived.
        Task[] handlers = await loop.Context.InvokeAsync(() => Task.FromResult<Task[]>(
            [.. messages.Select(args => loop.Context.InvokeAsync(() => LockKeeping.HandleAsync(args, LockKeeping.RenewEvery, Work), level: 2))]), level: 2);
        Func<Task> all = () => Task.WhenAll(handlers);
        if (checkpoints)
        {
            await all.Should().CompleteWithinAsync(TimeSpan.FromMinutes(2));
        }
        else
        {
            await all.Should().ThrowAsync<ServiceBusException>();
        }

        return (receiver, clock.Elapsed);

        async Task Work(ServiceBusReceivedMessage message, CancellationToken cancellationToken)
        {
            for (int slice = 0; slice < 30; slice++)
            {
                clock.Advance(s_slice);     // 5 s of CPU work on the loop thread, on the virtual clock
                if (checkpoints)
                {
                    await Priority.Checkpoint();
                }
            }
        }
    }

    /// <summary>The service's side of the locks, on the virtual clock: a renewal or completion after a lock ran out is refused, as the service refuses it.</summary>
    private sealed class FakeReceiver(TimeProvider clock, TimeSpan lockDuration) : ServiceBusReceiver
    {
        private readonly Dictionary<string, DateTimeOffset> _lockedUntil = [];

        public int Renewals { get; private set; }

        public int Completed { get; private set; }

        public int LocksLost { get; private set; }

        public ServiceBusReceivedMessage Deliver(string id)
        {
            DateTimeOffset until = clock.GetUtcNow() + lockDuration;
            _lockedUntil[id] = until;
            return ServiceBusModelFactory.ServiceBusReceivedMessage(messageId: id, lockTokenGuid: Guid.NewGuid(), lockedUntil: until);
        }

        public override Task RenewMessageLockAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default)
        {
            Check(message);
            Renewals++;
            _lockedUntil[message.MessageId] = clock.GetUtcNow() + lockDuration;
            return Task.CompletedTask;
        }

        public override Task CompleteMessageAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default)
        {
            Check(message);
            Completed++;
            return Task.CompletedTask;
        }

        private void Check(ServiceBusReceivedMessage message)
        {
            if (clock.GetUtcNow() > _lockedUntil[message.MessageId])
            {
                LocksLost++;
                throw new ServiceBusException($"The lock of {message.MessageId} ran out.", ServiceBusFailureReason.MessageLockLost);
            }
        }
    }
}
