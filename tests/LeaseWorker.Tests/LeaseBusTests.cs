namespace LeaseWorker.Tests;

public class LeaseBusTests
{
    private static readonly TimeSpan s_lease = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan s_refreshDelay = TimeSpan.FromSeconds(2);

    private readonly ManualClock _clock = new();

    // Zero I/O durations: every call completes synchronously, and only the manual clock decides.
    private LeaseBus NewBus(int messages) => new(messages, TimeSpan.Zero, TimeSpan.Zero, s_refreshDelay, s_lease, _clock);

    [Fact]
    public async Task ReceiveAsync_WhenEmpty_ReturnsNull()
    {
        LeaseBus bus = NewBus(1);

        (await bus.ReceiveAsync()).Should().NotBeNull();
        (await bus.ReceiveAsync()).Should().BeNull();
        bus.Totals().Received.Should().Be(1);
    }

    [Fact]
    public async Task RefreshAsync_BeforeExpiry_ExtendsTheLeaseFromTheRefresh()
    {
        LeaseBus bus = NewBus(1);
        Lease lease = (await bus.ReceiveAsync())!;

        _clock.Advance(TimeSpan.FromSeconds(4.9));
        (await bus.RefreshAsync(lease)).Should().BeTrue();
        _clock.Advance(TimeSpan.FromSeconds(4.9)); // 9.8 s after delivery, 4.9 s after the renewal
        (await bus.AckAsync(lease)).Should().BeTrue();

        bus.Totals().Should().BeEquivalentTo(new { Received = 1, Succeeded = 1, Lost = 0, FailedRefreshes = 0, RejectedAcks = 0 });
    }

    [Fact]
    public async Task RefreshAsync_AfterExpiry_FailsAndTheMessageIsLost()
    {
        LeaseBus bus = NewBus(1);
        Lease lease = (await bus.ReceiveAsync())!;

        _clock.Advance(TimeSpan.FromSeconds(5.1));
        (await bus.RefreshAsync(lease)).Should().BeFalse();

        lease.State.Should().Be(LeaseState.Lost);
        (await bus.AckAsync(lease)).Should().BeFalse("a lost message cannot be acknowledged afterwards");
        bus.Totals().Should().BeEquivalentTo(new { Received = 1, Succeeded = 0, Lost = 1, FailedRefreshes = 1, RejectedAcks = 0 });
    }

    [Fact]
    public async Task AckAsync_AfterExpiry_IsRejectedAndTheMessageIsLost()
    {
        LeaseBus bus = NewBus(1);
        Lease lease = (await bus.ReceiveAsync())!;

        _clock.Advance(TimeSpan.FromSeconds(5.1));
        (await bus.AckAsync(lease)).Should().BeFalse();

        bus.Totals().Should().BeEquivalentTo(new { Received = 1, Succeeded = 0, Lost = 1, FailedRefreshes = 0, RejectedAcks = 1 });
    }

    [Fact]
    public async Task Totals_DeliveredButNeverAcknowledged_CountsAsLost()
    {
        LeaseBus bus = NewBus(2);
        Lease first = (await bus.ReceiveAsync())!;
        _ = await bus.ReceiveAsync();
        (await bus.AckAsync(first)).Should().BeTrue();

        bus.Totals().Should().BeEquivalentTo(new { Received = 2, Succeeded = 1, Lost = 1 });
    }

    [Fact]
    public async Task RefreshAsync_LaterThanTheCycle_RecordsTheLateness()
    {
        LeaseBus bus = NewBus(1);
        Lease lease = (await bus.ReceiveAsync())!;

        _clock.Advance(s_refreshDelay + TimeSpan.FromMilliseconds(300)); // first cycle: the refresh delay alone
        (await bus.RefreshAsync(lease)).Should().BeTrue();
        bus.Totals().WorstRefreshLateness.Should().Be(TimeSpan.FromMilliseconds(300));

        _clock.Advance(s_refreshDelay + TimeSpan.FromMilliseconds(100)); // later cycles also include the reply (zero here)
        (await bus.RefreshAsync(lease)).Should().BeTrue();
        bus.Totals().WorstRefreshLateness.Should().Be(TimeSpan.FromMilliseconds(300));
    }
}
