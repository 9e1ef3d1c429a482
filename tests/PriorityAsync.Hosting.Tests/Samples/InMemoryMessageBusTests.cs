using MessageBus;

namespace PriorityAsync.Hosting.Tests.Samples;

public sealed class InMemoryMessageBusTests
{
    private static readonly TimeSpan LeaseDuration = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task ReceiveAsync_LeaseExpired_RedeliversWithANewTokenAndTheOldHolderIsFenced()
    {
        var time = new ManualTime();
        var bus = new InMemoryMessageBus(time: time);
        bus.Enqueue("a");
        Lease first = (await bus.ReceiveAsync(LeaseDuration))!;
        (await bus.ReceiveAsync(LeaseDuration)).Should().BeNull("the only message is leased");

        time.Advance(LeaseDuration);
        Lease second = (await bus.ReceiveAsync(LeaseDuration))!;

        second.MessageId.Should().Be(first.MessageId);
        second.Token.Should().NotBe(first.Token);
        second.DeliveryCount.Should().Be(2);
        (await bus.RenewAsync(first, LeaseDuration)).Should().BeFalse();
        (await bus.CompleteAsync(first)).Should().BeFalse();
        (await bus.CompleteAsync(second)).Should().BeTrue();
        (await bus.GetCountsAsync()).Should().Be(new BusCounts(Enqueued: 1, Delivered: 2, Redelivered: 1, Completed: 1, RejectedCompletes: 1, FailedRenewals: 1, Abandoned: 0, Leased: 0, Available: 0, ExpiredRedeliveries: 1));
    }

    [Fact]
    public async Task RenewAsync_BeforeExpiry_ExtendsTheLeaseFromTheBusClock()
    {
        var time = new ManualTime();
        var bus = new InMemoryMessageBus(time: time);
        bus.Enqueue("a");
        Lease lease = (await bus.ReceiveAsync(LeaseDuration))!;

        time.Advance(LeaseDuration - TimeSpan.FromTicks(1));
        (await bus.RenewAsync(lease, LeaseDuration)).Should().BeTrue();
        time.Advance(LeaseDuration - TimeSpan.FromTicks(1));

        (await bus.ReceiveAsync(LeaseDuration)).Should().BeNull("the renewed lease has not expired");
        (await bus.CompleteAsync(lease)).Should().BeTrue();
        (await bus.CompleteAsync(lease)).Should().BeFalse("a message completes once");
    }

    [Fact]
    public async Task AbandonAsync_CurrentLease_MessageIsTakenAgainAtOnceBeforeOlderOnes()
    {
        var bus = new InMemoryMessageBus(time: new ManualTime());
        bus.Enqueue("a");
        bus.Enqueue("b");
        Lease a = (await bus.ReceiveAsync(LeaseDuration))!;

        (await bus.AbandonAsync(a)).Should().BeTrue();
        (await bus.AbandonAsync(a)).Should().BeFalse("the lease is no longer current");
        Lease again = (await bus.ReceiveAsync(LeaseDuration))!;

        again.MessageId.Should().Be(a.MessageId);
        again.DeliveryCount.Should().Be(2);
        (await bus.GetCountsAsync()).Should().Be(new BusCounts(Enqueued: 2, Delivered: 2, Redelivered: 1, Completed: 0, RejectedCompletes: 0, FailedRenewals: 0, Abandoned: 1, Leased: 1, Available: 1, ExpiredRedeliveries: 0));
    }

    private sealed class ManualTime : TimeProvider
    {
        private DateTimeOffset _now = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

        public override DateTimeOffset GetUtcNow() => _now;

        public void Advance(TimeSpan by) => _now += by;
    }
}
