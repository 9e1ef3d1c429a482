using TestSupport.RabbitMq;

namespace RabbitMqConsumers.Tests;

public sealed class SampleTests
{
    [RabbitMqFact]
    public async Task Latency_SmallRun_PrintsEveryConsumerWithAFigurePerPrefetchCount()
    {
        (int exitCode, IReadOnlyList<string> output, IReadOnlyList<string> error) =
            await SampleProcess.RunAsync("--connection", TestBroker.Uri.ToString(), "--prefetch", "1,4", "--trials", "1", "--work", "2ms");

        exitCode.Should().Be(0, string.Join('\n', error));
        string[] rows = [.. output.Where(l => l.StartsWith("| ", StringComparison.Ordinal) && !l.StartsWith("| consumer", StringComparison.Ordinal))];
        rows.Select(r => r.Split('|')[1].Trim()).Should().Equal(
            "RabbitMQ.Client, plain consumer",
            "RabbitMQ.Client + PriorityContext (one thread)",
            "RabbitMQ.Client + PriorityThreadPool (2 threads, level 0 capped at 1)",
            "MassTransit, plain (defaults)",
            "MassTransit + UsePriorityScheduler (PriorityContext)");
        rows.Should().OnlyContain(r => r.Split('|', StringSplitOptions.RemoveEmptyEntries).Skip(1).Count(c => c.Contains(" / ", StringComparison.Ordinal)) == 2);
    }

    [RabbitMqFact]
    public async Task Throughput_SmallRun_PrintsTheThreeClientConsumers()
    {
        (int exitCode, IReadOnlyList<string> output, IReadOnlyList<string> error) =
            await SampleProcess.RunAsync("--connection", TestBroker.Uri.ToString(), "--throughput", "--messages", "300", "--work", "0ms");

        exitCode.Should().Be(0, string.Join('\n', error));
        output.Count(l => l.StartsWith("| RabbitMQ.Client", StringComparison.Ordinal)).Should().Be(3);
    }

    [Theory]
    [InlineData("not-a-uri", "RabbitMqConsumers: the connection string must be an AMQP URI such as amqp://user:password@host:5672/ (got something else; not repeated, it may hold a password).")]
    [InlineData("amqp://user:secret@127.0.0.1:1/", "RabbitMqConsumers: Cannot connect to RabbitMQ at 127.0.0.1:1: connection refused (is the server running?).")]
    [InlineData("amqp://user:secret@no-such-host.invalid:5672/", "RabbitMqConsumers: Cannot connect to RabbitMQ at no-such-host.invalid:5672: unknown host.")]
    public async Task BadConnection_OneLineAndExitCode2_WithoutThePassword(string connection, string line)
    {
        (int exitCode, IReadOnlyList<string> output, IReadOnlyList<string> error) = await SampleProcess.RunAsync("--connection", connection);

        exitCode.Should().Be(2);
        error.Should().Equal(line);
        output.Should().BeEmpty();
    }

    [RabbitMqFact]
    public async Task WrongPassword_OneLineAndExitCode2()
    {
        var uri = new UriBuilder(TestBroker.Uri) { Password = "wrong" };
        (int exitCode, _, IReadOnlyList<string> error) = await SampleProcess.RunAsync("--connection", uri.Uri.ToString());

        exitCode.Should().Be(2);
        error.Should().Equal($"RabbitMqConsumers: Cannot connect to RabbitMQ at {uri.Host}:{uri.Port}: the user name or password was refused.");
    }
}
