using MessageBus;

namespace Samples.Tests.Buses;

/// <summary>
/// <see cref="LeaseQueueBus"/> over a queue whose replies the test gives by hand: the renewals asked for while one is in flight go
/// out together, in one request, each answered on its own. Against the real PostgreSQL and Redis queues the same bus keeps their
/// fencing and counts (tests/Shared/LeaseQueueBusContract.cs, run by both brokers' test projects).
/// </summary>
public sealed class LeaseQueueBusTests
{
    private static readonly TimeSpan s_patience = TimeSpan.FromSeconds(60);
    private static readonly TimeSpan s_lease = TimeSpan.FromSeconds(5);
    private static readonly Lease[] s_leases = [.. Enumerable.Range(1, 5).Select(i => new Lease(i, $"m{i}", 100 + i, 1))];

    [Fact]
    public async Task RenewAsync_AskedForWhileOneIsInFlight_GoTogetherInOneRequestAfterIt_EachAnsweredOnItsOwn()
    {
        var queue = new ScriptedQueue();
        var bus = new LeaseQueueBus(queue);

        Task<bool> first = bus.RenewAsync(s_leases[0], s_lease).AsTask();
        Renewal sent = await queue.NextAsync();
        Task<bool>[] later = [.. s_leases[1..4].Select(l => bus.RenewAsync(l, s_lease).AsTask())];

        sent.Leases.Should().Equal(s_leases[0]);
        later.Should().OnlyContain(t => !t.IsCompleted, "they wait for the request on its way");
        queue.Requests.Should().Be(1);

        sent.Reply.SetResult([true]);
        (await first.WaitAsync(s_patience)).Should().BeTrue();
        Renewal together = await queue.NextAsync();
        together.Leases.Should().Equal(s_leases[1..4]);
        together.Length.Should().Be(s_lease);
        together.Reply.SetResult([true, false, true]);

        (await Task.WhenAll(later).WaitAsync(s_patience)).Should().Equal(true, false, true);
        queue.Requests.Should().Be(2);
    }

    [Fact]
    public async Task RenewAsync_ARequestFails_EveryRenewalInItFails_AndTheNextRenewalGoesOutAtOnce()
    {
        var queue = new ScriptedQueue();
        var bus = new LeaseQueueBus(queue);
        Task<bool> first = bus.RenewAsync(s_leases[0], s_lease).AsTask();
        Renewal sent = await queue.NextAsync();
        Task<bool> second = bus.RenewAsync(s_leases[1], s_lease).AsTask();
        Task<bool> third = bus.RenewAsync(s_leases[2], s_lease).AsTask();
        sent.Reply.SetResult([true]);
        Renewal together = await queue.NextAsync();

        together.Reply.SetException(new QueueConnectionException("the server went away"));

        (await first.WaitAsync(s_patience)).Should().BeTrue();
        await FluentActions.Awaiting(() => second.WaitAsync(s_patience)).Should().ThrowAsync<QueueConnectionException>();
        await FluentActions.Awaiting(() => third.WaitAsync(s_patience)).Should().ThrowAsync<QueueConnectionException>();
        Task<bool> after = bus.RenewAsync(s_leases[3], s_lease).AsTask();
        Renewal alone = await queue.NextAsync();
        alone.Leases.Should().Equal(s_leases[3]);
        alone.Reply.SetResult([true]);
        (await after.WaitAsync(s_patience)).Should().BeTrue("a failed batch leaves nothing in flight");
    }

    [Fact]
    public async Task RenewAsync_DifferentLengthsWaiting_OneRequestPerLength()
    {
        var queue = new ScriptedQueue();
        var bus = new LeaseQueueBus(queue);
        Task<bool> first = bus.RenewAsync(s_leases[0], s_lease).AsTask();
        Renewal sent = await queue.NextAsync();
        Task<bool> longer = bus.RenewAsync(s_leases[1], s_lease * 2).AsTask();
        Task<bool> same = bus.RenewAsync(s_leases[2], s_lease).AsTask();

        sent.Reply.SetResult([true]);
        Renewal a = await queue.NextAsync();
        a.Reply.SetResult([.. a.Leases.Select(_ => true)]);
        Renewal b = await queue.NextAsync();
        b.Reply.SetResult([.. b.Leases.Select(_ => true)]);

        new[] { a, b }.Select(r => (r.Length, r.Leases.Count)).Should().BeEquivalentTo([(s_lease * 2, 1), (s_lease, 1)]);
        (await Task.WhenAll(first, longer, same).WaitAsync(s_patience)).Should().OnlyContain(r => r);
    }

    [Fact]
    public async Task RenewAllAsync_OneRequestForAll_ThePassThroughCallsGoStraightToTheQueue()
    {
        var queue = new ScriptedQueue();
        var bus = new LeaseQueueBus(queue);

        Task<bool[]> all = bus.RenewAllAsync(s_leases, s_lease).AsTask();
        Renewal sent = await queue.NextAsync();
        sent.Leases.Should().Equal(s_leases);
        sent.Reply.SetResult([true, true, false, true, true]);

        (await all.WaitAsync(s_patience)).Should().Equal(true, true, false, true, true);
        (await bus.ReceiveAsync(s_lease)).Should().Be(s_leases[0]);
        (await bus.CompleteAsync(s_leases[0])).Should().BeTrue();
        (await bus.AbandonAsync(s_leases[1])).Should().BeFalse();
        (await bus.GetCountsAsync()).Should().Be(ScriptedQueue.Counts);
        bus.Queue.Should().BeSameAs(queue);
    }

    [Fact]
    public async Task NullArguments_Throw()
    {
        var bus = new LeaseQueueBus(new ScriptedQueue());

        FluentActions.Invoking(() => new LeaseQueueBus(null!)).Should().Throw<ArgumentNullException>().WithParameterName("queue");
        FluentActions.Invoking(() => bus.RenewAsync(null!, s_lease)).Should().Throw<ArgumentNullException>().WithParameterName("lease");
        FluentActions.Invoking(() => bus.RenewAsync(s_leases[0], TimeSpan.Zero)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("leaseDuration");
        await FluentActions.Awaiting(() => bus.CompleteAsync(null!).AsTask()).Should().ThrowAsync<ArgumentNullException>();
    }

    private sealed record Renewal(IReadOnlyList<Lease> Leases, TimeSpan Length, TaskCompletionSource<bool[]> Reply);

    /// <summary>A queue whose renewals wait for the test's reply; the other calls answer at once.</summary>
    private sealed class ScriptedQueue : ILeaseQueue
    {
        public static readonly BusCounts Counts = new(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);

        private readonly System.Threading.Channels.Channel<Renewal> _sent = System.Threading.Channels.Channel.CreateUnbounded<Renewal>();
        private int _requests;

        public int Requests => Volatile.Read(ref _requests);

        public async Task<Renewal> NextAsync() => await _sent.Reader.ReadAsync().AsTask().WaitAsync(s_patience);

        public Task<bool[]> RenewAsync(IReadOnlyList<Lease> leases, TimeSpan leaseDuration, CancellationToken cancellationToken = default)
        {
            var renewal = new Renewal([.. leases], leaseDuration, new TaskCompletionSource<bool[]>(TaskCreationOptions.RunContinuationsAsynchronously));
            Interlocked.Increment(ref _requests);
            _sent.Writer.TryWrite(renewal);
            return renewal.Reply.Task;
        }

        public Task<Lease?> ReceiveAsync(TimeSpan leaseDuration, CancellationToken cancellationToken = default) => Task.FromResult<Lease?>(s_leases[0]);

        public Task<bool> CompleteAsync(Lease lease, CancellationToken cancellationToken = default) => Task.FromResult(true);

        public Task<bool> AbandonAsync(Lease lease, CancellationToken cancellationToken = default) => Task.FromResult(false);

        public Task<BusCounts> GetCountsAsync(CancellationToken cancellationToken = default) => Task.FromResult(Counts);
    }
}
