using System.Text;
using RabbitMQ.Client;
using TestSupport.RabbitMq;

namespace RabbitMqConsumers.Tests;

/// <summary>
/// The sample's worker (<c>--drain</c>) against a broker that fails under it: a worker killed, the server closing every connection, the
/// broker killed and restarted. Each test runs on a node of its own (tests/rabbitmq/start.sh), so the other assemblies' tests, which
/// use the shared node at the same time, are not disturbed. What must hold at any load: every message is handled, the queue ends
/// empty, and a message handled twice was handed out again by the broker (marked redelivered), never duplicated by the worker.
/// </summary>
public sealed class WorkerFaultTests
{
    private const int Messages = 300;

    [RabbitMqNodeFact]
    public async Task WorkerKilled_ItsUnackedMessagesAreRedelivered_AndTheOtherWorkerHandlesEveryMessage()
    {
        await using TestNode node = await TestNode.StartAsync();
        string queue = await PublishAsync(node);
        using SampleProcess doomed = StartWorker(node, queue);
        using SampleProcess survivor = StartWorker(node, queue);
        await doomed.WaitForLinesAsync("handled ", 20);
        doomed.Kill();

        (await survivor.WaitForExitAsync()).Should().Be(0, string.Join('\n', survivor.Errors));
        await AssertEveryMessageHandledAsync(node, queue, doomed.Lines.Concat(survivor.Lines));
        survivor.Lines.Should().Contain(l => l.EndsWith(" True", StringComparison.Ordinal), "the killed worker's unacknowledged messages come back marked redelivered");
    }

    [RabbitMqNodeFact]
    public async Task ServerClosesTheConnections_TheWorkerReconnectsAndGoesOn()
    {
        await using TestNode node = await TestNode.StartAsync();
        string queue = await PublishAsync(node);
        using SampleProcess worker = StartWorker(node, queue);
        await worker.WaitForLinesAsync("handled ", 20);
        await node.CtlAsync("close_all_connections", "test: the server closes every connection");

        (await worker.WaitForExitAsync()).Should().Be(0, string.Join('\n', worker.Errors));
        await AssertEveryMessageHandledAsync(node, queue, worker.Lines);
    }

    [RabbitMqNodeFact]
    public async Task BrokerKilledAndRestarted_NothingConfirmedIsLost_TheWorkerReconnectsAndGoesOn()
    {
        await using TestNode node = await TestNode.StartAsync();
        string queue = await PublishAsync(node);
        using SampleProcess worker = StartWorker(node, queue);
        await worker.WaitForLinesAsync("handled ", 20);
        await node.CrashAndRestartAsync();

        (await worker.WaitForExitAsync()).Should().Be(0, string.Join('\n', worker.Errors));
        await AssertEveryMessageHandledAsync(node, queue, worker.Lines);
    }

    private static SampleProcess StartWorker(TestNode node, string queue) =>
        SampleProcess.Start("--connection", node.Uri.ToString(), "--drain", queue, "--prefetch", "10", "--work", "5ms");

    /// <summary>A durable priority queue of <see cref="Messages"/> persistent messages, "1" to "300", each confirmed by the broker.</summary>
    private static async Task<string> PublishAsync(TestNode node)
    {
        string queue = TestBroker.NewQueueName("drain");
        await using IConnection connection = await new ConnectionFactory { Uri = node.Uri }.CreateConnectionAsync();
        await using IChannel channel = await connection.CreateChannelAsync(new CreateChannelOptions(publisherConfirmationsEnabled: true, publisherConfirmationTrackingEnabled: true));
        await Rabbit.DeclareAsync(channel, queue);
        var properties = new BasicProperties { Persistent = true };
        for (int id = 1; id <= Messages; id++)
        {
            await channel.BasicPublishAsync("", queue, false, properties, Encoding.UTF8.GetBytes(id.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }

        return queue;
    }

    private static async Task AssertEveryMessageHandledAsync(TestNode node, string queue, IEnumerable<string> lines)
    {
        (string Id, bool Redelivered)[] handled = [.. lines
            .Where(l => l.StartsWith("handled ", StringComparison.Ordinal))
            .Select(l => l.Split(' '))
            .Select(p => (p[1], bool.Parse(p[2])))];
        handled.Select(h => h.Id).Distinct().Should().BeEquivalentTo(Enumerable.Range(1, Messages).Select(i => i.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        foreach (IGrouping<string, (string Id, bool Redelivered)> twice in handled.GroupBy(h => h.Id).Where(g => g.Count() > 1))
        {
            twice.Skip(1).Should().OnlyContain(h => h.Redelivered, $"message {twice.Key} was handled again only because the broker handed it out again");
        }

        await using IConnection connection = await new ConnectionFactory { Uri = node.Uri }.CreateConnectionAsync();
        await using IChannel channel = await connection.CreateChannelAsync();
        (await channel.QueueDeclarePassiveAsync(queue)).MessageCount.Should().Be(0);
    }
}
