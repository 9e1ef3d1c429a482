namespace MessageBus.Postgres.Tests;

public sealed class PostgresQueueProducerTests
{
    [PostgresFact]
    public async Task FillAsync_AllAtOnceInBatches_EnqueuesEveryMessageInOrder()
    {
        await using PostgresLeaseQueue queue = await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions());
        try
        {
            int sent = await new PostgresQueueProducer(queue) { BatchSize = 7 }.FillAsync(100, i => $"m{i}");

            sent.Should().Be(100);
            List<string> payloads = new();
            while (await queue.ReceiveAsync(TimeSpan.FromMinutes(10)) is { } lease)
            {
                payloads.Add(lease.Payload);
            }

            payloads.Should().Equal(Enumerable.Range(0, 100).Select(i => $"m{i}"));
        }
        finally
        {
            await queue.DropAsync();
        }
    }

    [PostgresFact]
    public async Task FillAsync_AtARate_EnqueuesEveryMessage()
    {
        await using PostgresLeaseQueue queue = await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions());
        try
        {
            int sent = await new PostgresQueueProducer(queue).FillAsync(40, i => $"m{i}", messagesPerSecond: 400)
                .WaitAsync(TestDatabase.Patience);

            sent.Should().Be(40);
            (await queue.GetCountsAsync()).Available.Should().Be(40);
        }
        finally
        {
            await queue.DropAsync();
        }
    }

    [PostgresFact]
    public async Task FillAsync_AtARate_SendsNoMessageBeforeItsTime()
    {
        // A clock that never moves and timers that never fire: at one message a second, only message 0 is ever due.
        await using PostgresLeaseQueue queue = await TestDatabase.CreateQueueAsync(TestDatabase.NewOptions());
        try
        {
            using CancellationTokenSource stop = new();
            Task<int> fill = new PostgresQueueProducer(queue, new StoppedClock()).FillAsync(3, i => $"m{i}", messagesPerSecond: 1, stop.Token);
            using CancellationTokenSource patience = new(TestDatabase.Patience);
            while ((await queue.GetCountsAsync()).Enqueued == 0)
            {
                await Task.Delay(10, patience.Token);
            }

            fill.IsCompleted.Should().BeFalse("messages 1 and 2 are not due while the clock stands still");
            stop.Cancel();

            await FluentActions.Awaiting(() => fill.WaitAsync(TestDatabase.Patience)).Should().ThrowAsync<OperationCanceledException>();
            (await queue.GetCountsAsync()).Enqueued.Should().Be(1);
        }
        finally
        {
            await queue.DropAsync();
        }
    }

    [Theory]
    [InlineData(-1.0)]
    [InlineData(double.NaN)]
    [InlineData(double.PositiveInfinity)]
    public async Task FillAsync_BadRate_Throws(double rate)
    {
        await using PostgresLeaseQueue queue = new(new PostgresLeaseQueueOptions { ConnectionString = "Host=127.0.0.1;Port=1" });

        await FluentActions.Awaiting(() => new PostgresQueueProducer(queue).FillAsync(1, i => "m", rate))
            .Should().ThrowAsync<ArgumentOutOfRangeException>().WithMessage("*messagesPerSecond*");
    }

    private sealed class StoppedClock : TimeProvider
    {
        public override long GetTimestamp() => 0;

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) => new NeverTimer();

        private sealed class NeverTimer : ITimer
        {
            public bool Change(TimeSpan dueTime, TimeSpan period) => true;

            public void Dispose()
            {
            }

            public ValueTask DisposeAsync() => ValueTask.CompletedTask;
        }
    }
}
