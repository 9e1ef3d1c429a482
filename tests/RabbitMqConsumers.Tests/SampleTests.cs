using System.IO;
using System.Text.RegularExpressions;
using TestSupport.RabbitMq;

namespace RabbitMqConsumers.Tests;

public sealed partial class SampleTests
{
    // Added after the README's arguments: a run of seconds, not minutes (fewer trials and prefetch counts, less work, fewer messages).
    private static readonly string[] s_compressed = ["--trials", "1", "--prefetch", "1,4", "--work", "2ms", "--messages", "300"];

    /// <summary>Every command of the sample's README, compressed, against the tests' broker: it exits 0 and prints its table.</summary>
    [RabbitMqFact]
    public async Task ReadmeCommands_RunCompressed_ExitZeroAndPrintATable()
    {
        string readme = Path.Combine(TestNode.RepositoryRoot(), "samples", "RabbitMqConsumers", "README.md");
        string[] commands = [.. File.ReadLines(readme).Select(l => ReadmeCommand().Match(l)).Where(m => m.Success).Select(m => m.Groups["arguments"].Value.Trim())];
        commands.Should().HaveCount(2, "the README's two commands: the latency table and --throughput");

        foreach (string arguments in commands)
        {
            string[] given = arguments.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            (int exitCode, IReadOnlyList<string> output, IReadOnlyList<string> error) =
                await SampleProcess.RunAsync([.. given, .. s_compressed, "--connection", TestBroker.Uri.ToString()]);

            exitCode.Should().Be(0, $"'{arguments}': {string.Join('\n', error)}");
            output.Should().Contain(l => l.StartsWith("| RabbitMQ.Client, plain consumer |", StringComparison.Ordinal), arguments);
        }
    }

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

    [GeneratedRegex(@"^dotnet run --project samples/RabbitMqConsumers -c Release(?: --(?<arguments>[^#]*))?")]
    private static partial Regex ReadmeCommand();
}
