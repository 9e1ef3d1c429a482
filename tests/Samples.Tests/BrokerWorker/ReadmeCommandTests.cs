using System.Globalization;
using System.IO;
using System.Text.Json;
using System.Text.RegularExpressions;
using BrokerWorker;
using BrokerWorker.Bus;
using BrokerWorker.Report;
using Samples.Support;

namespace Samples.Tests.BrokerWorker;

/// <summary>
/// Every command of the BrokerWorker and MessageBus READMEs' shell blocks (and their inline <c>dotnet run</c> commands), and the
/// sample's commands of its measured runs in docs/benchmarks.md, runs, or is
/// checked, here: each <c>dotnet run --project samples/BrokerWorker</c> command runs in-process with its own arguments (on PostgreSQL,
/// Redis and RabbitMQ where the server is up, as in CI) plus <c>--json</c> to read its results, exits 0 and loses nothing by the broker's own
/// counts; the scripts and projects the other commands name exist. Only what holds at any machine load is asserted: exit codes and
/// counts, never a time (what each mode keeps or loses is proven on virtual time in <see cref="BrokerWorkerMemoryTests"/> and
/// measured in the README's tables).
/// </summary>
/// <remarks>
/// The runs are compressed, so that the whole class takes a few minutes beside other work (<see cref="Compressed"/>): every
/// duration a tenth of the command's own (<c>--time-scale</c> and <c>--stall-after</c>; the default time scale 0.1 becomes 0.01),
/// at most <see cref="MaxMessages"/> messages of at most <see cref="MaxSteps"/> steps, at most two worker processes
/// (<c>--workers N</c> and <c>--workers 4</c> run with 2), <c>--bus-cost</c> for <see cref="BusCostDuration"/> a round. On PostgreSQL, the connection
/// string's connect timeout is <see cref="PostgresConnectTimeoutSeconds"/> s: a worker process that starts on a busy machine can need
/// more than Npgsql's default to open its first connection.
/// A command with <c>--virtual-time</c> runs as written: it is exact and takes milliseconds. What the compression changes is how
/// long each CPU part, I/O part and lease lasts, and so how many leases a loaded machine loses; every code path a command takes
/// (its broker, modes, processes, hang, checkpoints, tables) is the same.
/// </remarks>
public sealed partial class ReadmeCommandTests
{
    private const int MaxMessages = 4;

    private const int MaxSteps = 2;

    private static readonly TimeSpan BusCostDuration = TimeSpan.FromMilliseconds(200);

    private const int PostgresConnectTimeoutSeconds = 60;

    public static readonly string[] Readmes = ["samples/BrokerWorker/README.md", "samples/MessageBus.Postgres/README.md", "samples/MessageBus.Redis/README.md"];

    /// <summary>Where the sample's measured runs are, with their commands: only the sample's commands of these files are run here.</summary>
    public static readonly string[] Measurements = ["docs/benchmarks.md"];

    private const string Run = "dotnet run --project samples/BrokerWorker -c Release";

    public static TheoryData<string, int, string> MemoryCommands => Commands("memory");

    public static TheoryData<string, int, string> PostgresCommands => Commands("postgres");

    public static TheoryData<string, int, string> RedisCommands => Commands("redis");

    public static TheoryData<string, int, string> RabbitMqCommands => Commands("rabbitmq");

    [Theory]
    [MemberData(nameof(MemoryCommands))]
    [Trait("Category", "Stress")]
    public Task BrokerWorkerCommand_InMemory_ExitsZeroAndLosesNothing(string readme, int line, string command) => RunAsync(readme, line, command);

    [BrokerTheory("postgres")]
    [MemberData(nameof(PostgresCommands))]
    [Trait("Category", "Stress")]
    public Task BrokerWorkerCommand_OnPostgres_ExitsZeroAndLosesNothing(string readme, int line, string command) => RunAsync(readme, line, command);

    [BrokerTheory("redis")]
    [MemberData(nameof(RedisCommands))]
    [Trait("Category", "Stress")]
    public Task BrokerWorkerCommand_OnRedis_ExitsZeroAndLosesNothing(string readme, int line, string command) => RunAsync(readme, line, command);

    [BrokerTheory("rabbitmq")]
    [MemberData(nameof(RabbitMqCommands))]
    [Trait("Category", "Stress")]
    public Task BrokerWorkerCommand_OnRabbitMq_ExitsZeroAndLosesNothing(string readme, int line, string command) => RunAsync(readme, line, command);

    [Fact]
    public void EveryCommand_Compressed_ParsesAndTakesTheSamePaths_OnlyShorterAndSmaller()
    {
        int compared = 0;
        foreach ((string readme, int line, string command) in AllCommands().Where(c => c.Command.StartsWith(Run, StringComparison.Ordinal)))
        {
            List<string> args = Arguments(command);
            CommandLine.TryParse(args, out Options written, out string? error).Should().BeTrue($"{readme}:{line}: {error}");
            CommandLine.TryParse(Compressed(args), out Options run, out error).Should().BeTrue($"{readme}:{line} compressed: {error}");

            // What the command chooses (broker, modes, hang, checkpoints, CPU part, what it measures) is as written.
            string where = $"{readme}:{line}: {command}";
            (run.Bus, run.HangMessage, run.Checkpoint, run.Cpu, run.BusCost, run.VirtualTime, run.Show)
                .Should().Be((written.Bus, written.HangMessage, written.Checkpoint, written.Cpu, written.BusCost, written.VirtualTime, written.Show), where);
            run.Modes.Should().Equal(written.Modes, where);
            if (written.VirtualTime || written.Show is not null)
            {
                (run.TimeScale, run.Messages, run.Steps, run.Workers, run.StallAfter).Should().Be(
                    (written.TimeScale, written.Messages, written.Steps, written.Workers, written.StallAfter), $"exact and quick, it runs as written: {where}");
                continue;
            }

            // Only shorter and smaller: time, messages, steps and processes.
            run.TimeScale.Should().BeLessThanOrEqualTo(written.TimeScale / (written.BusCost ? 1 : 10), where);
            run.ScaledStallAfter.Should().BeLessThanOrEqualTo(written.ScaledStallAfter, where);
            (run.Messages, run.Steps, run.Workers).Should().Be(
                (written.BusCost ? written.Messages : Math.Min(written.Messages, Math.Max(MaxMessages, (int)written.HangMessage)),
                 written.BusCost ? written.Steps : Math.Min(written.Steps, MaxSteps),
                 Math.Min(written.Workers, 2)),
                where);
            run.Messages.Should().BeGreaterThanOrEqualTo((int)written.HangMessage, "the hung message is still one of the run's");
            compared++;
        }

        compared.Should().BeGreaterThan(10);
    }

    [Fact]
    public void EveryCommand_IsABrokerWorkerRunOrNamesAScriptOrProjectThatExists()
    {
        string root = RepositoryRoot();
        var problems = new List<string>();
        int brokerWorker = 0;
        foreach ((string readme, int line, string command) in AllCommands())
        {
            if (command.StartsWith(Run, StringComparison.Ordinal))
            {
                brokerWorker++;
                continue;
            }

            // The scripts CI runs (.ci/run) to start and stop the servers, the test projects the root's `dotnet test` runs, and the
            // hand-made servers' steps (the same as the scripts'): whatever they name must exist.
            foreach (Match path in PathPattern().Matches(command))
            {
                if (!File.Exists(Path.Combine(root, path.Value)) && !Directory.Exists(Path.Combine(root, path.Value)))
                {
                    problems.Add($"{readme}:{line}: '{command}' names {path.Value}, which does not exist");
                }
            }

            if (!Known(command))
            {
                problems.Add($"{readme}:{line}: '{command}' is a command this test neither runs nor knows; run it here or say what it needs");
            }
        }

        problems.Should().BeEmpty();
        brokerWorker.Should().BeGreaterThan(5, "the READMEs show the sample's commands");
        string ci = File.ReadAllText(Path.Combine(root, ".ci", "run"));
        ci.Should().Contain("tests/postgres/start.sh").And.Contain("tests/redis/start.sh").And.Contain("tests/rabbitmq/start.sh", "CI starts the servers the commands need");
    }

    /// <summary>The command's arguments as this test runs them (see the class's remarks): compressed in time and size, the same code paths.</summary>
    private static List<string> Compressed(List<string> args)
    {
        List<string> run = [.. args];
        if (run.Contains("--virtual-time") || run.Contains("--help") || run.Contains("--version"))
        {
            return run;
        }

        if (run.Contains("--bus-cost"))
        {
            return run; // shorter rounds: see RunAsync
        }

        double timeScale = Value(run, "--time-scale") is { } given ? double.Parse(given, CultureInfo.InvariantCulture) : new Options().TimeScale;
        Set(run, "--time-scale", (timeScale / 10).ToString("R", CultureInfo.InvariantCulture));
        if (Value(run, "--stall-after") is { } stall && SampleCommandLine.TryParseDuration(stall, out TimeSpan stallAfter))
        {
            Set(run, "--stall-after", $"{(stallAfter / 10).TotalMilliseconds.ToString("R", CultureInfo.InvariantCulture)}ms");
        }

        int messages = Value(run, "--messages") is { } m ? int.Parse(m, CultureInfo.InvariantCulture) : new Options().Messages;
        int hang = Value(run, "--hang-message") is { } h ? int.Parse(h, CultureInfo.InvariantCulture) : 0;
        Set(run, "--messages", Math.Min(messages, Math.Max(MaxMessages, hang)).ToString(CultureInfo.InvariantCulture));
        int steps = Value(run, "--steps") is { } st ? int.Parse(st, CultureInfo.InvariantCulture) : new Options().Steps;
        Set(run, "--steps", Math.Min(steps, MaxSteps).ToString(CultureInfo.InvariantCulture));

        if (Value(run, "--workers") is { } workers && int.Parse(workers, CultureInfo.InvariantCulture) > 2)
        {
            Set(run, "--workers", "2");
        }

        return run;
    }

    private static string? Value(List<string> args, string option) => args.IndexOf(option) is var at and >= 0 && at + 1 < args.Count ? args[at + 1] : null;

    private static void Set(List<string> args, string option, string value)
    {
        int at = args.IndexOf(option);
        if (at >= 0)
        {
            args[at + 1] = value;
        }
        else
        {
            args.AddRange([option, value]);
        }
    }

    private static async Task RunAsync(string readme, int line, string command)
    {
        List<string> args = Compressed(Arguments(command));
        bool report = !args.Intersect(["--bus-cost", "--help", "--version"]).Any();
        if (report && !args.Contains("--json"))
        {
            args.Add("--json");
        }

        CommandLine.TryParse(args, out Options options, out string? error).Should().BeTrue(error);
        options = options with { BusCostDuration = BusCostDuration };
        if (options.Bus == "postgres" && options.Connection is null)
        {
            string connection = Environment.GetEnvironmentVariable(PostgresBroker.Kind.Variable)!;
            options = options with { Connection = new Npgsql.NpgsqlConnectionStringBuilder(connection) { Timeout = PostgresConnectTimeoutSeconds }.ConnectionString };
        }

        var stdout = new StringWriter();
        var stderr = new StringWriter();
        // Bounded below the runner's 10-minute hang limit, so that a command that never ends fails here, named.
        int exit = await App.RunAsync(options, stdout, stderr).WaitAsync(TimeSpan.FromMinutes(9));

        exit.Should().Be(0, $"{readme}:{line}: {command}\n  run as: {string.Join(' ', args)}\n{stderr}");
        if (!report)
        {
            stdout.ToString().Should().NotBeEmpty();
            if (args.Contains("--bus-cost"))
            {
                stdout.ToString().Should().Contain("plain", "the bus is measured against a plain client loop");
            }

            return;
        }

        RunResult[] results = [.. stdout.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(l => JsonSerializer.Deserialize<RunResult>(l)!)];
        results.Should().NotBeEmpty();
        foreach (RunResult r in results)
        {
            string what = $"{readme}:{line} {r.Mode} on {r.Workers} worker(s): {r.End}, {r.AtEnd.Completed} of {r.AtEnd.Enqueued}";
            r.Final.Enqueued.Should().BeGreaterThan(0, what);

            // Exactly once: every message is in one state, completed at most once, and every completion the broker accepted is one a
            // worker was told it made (a completion's reply is lost only with a connection error; a worker process that was killed
            // for stopping too slowly sends no counts).
            (r.Final.Completed + r.Final.Available + r.Final.Leased).Should().Be(r.Final.Enqueued, what);
            r.Final.Completed.Should().BeLessThanOrEqualTo(r.Final.Enqueued, what);
            r.Final.Delivered.Should().BeGreaterThanOrEqualTo(r.Final.Completed, what);
            if (r.Seen.ConnectionErrors == 0 && (r.Bus == "memory" || r.Seen.Processes == r.Workers))
            {
                r.Seen.Completed.Should().Be(r.Final.Completed, what);
            }

            // Fencing: a delivery sends at most one complete, and the broker accepts one per message, so the refused ones come from
            // the deliveries that did not complete their message.
            r.Final.RejectedCompletes.Should().BeLessThanOrEqualTo(r.Final.Delivered - r.Final.Completed, what);

            if (r.End == RunEnd.Completed)
            {
                r.AtEnd.Completed.Should().Be(r.AtEnd.Enqueued, what);
            }
        }
    }

    private static TheoryData<string, int, string> Commands(string bus)
    {
        var data = new TheoryData<string, int, string>();
        foreach ((string readme, int line, string command) in AllCommands())
        {
            if (command.StartsWith(Run, StringComparison.Ordinal))
            {
                List<string> args = Arguments(command);
                int at = args.IndexOf("--bus");
                if ((at >= 0 ? args[at + 1] : "memory") == bus)
                {
                    data.Add(readme, line, command);
                }
            }
        }

        return data;
    }

    /// <summary>The arguments after <c>--</c>, split as a shell would (quotes), <c>--workers N</c> standing for 2.</summary>
    private static List<string> Arguments(string command)
    {
        string rest = command.Length > Run.Length ? command[Run.Length..].Trim() : "";
        if (rest.StartsWith("--", StringComparison.Ordinal) && rest.Length > 2 && rest[2] == ' ')
        {
            rest = rest[3..];
        }

        List<string> args = [.. WordPattern().Matches(rest).Select(m => m.Groups[1].Success ? m.Groups[1].Value : m.Groups[2].Success ? m.Groups[2].Value : m.Value)];
        return [.. args.Select(a => a == "N" ? "2" : a)];
    }

    private static bool Known(string command) =>
        command.StartsWith("dotnet test tests/", StringComparison.Ordinal)
        || KnownPattern().IsMatch(command);

    /// <summary>Every command line of every shell block of <see cref="Readmes"/> (comments dropped, continuation lines joined), and every
    /// inline <c>dotnet run</c> command of the sample.</summary>
    public static IEnumerable<(string Readme, int Line, string Command)> AllCommands()
    {
        string root = RepositoryRoot();
        foreach (string readme in Readmes.Concat(Measurements))
        {
            bool sampleOnly = Measurements.Contains(readme);
            string[] lines = File.ReadAllLines(Path.Combine(root, readme));
            bool inBlock = false;
            string pending = "";
            int start = 0;
            for (int i = 0; i < lines.Length; i++)
            {
                string text = lines[i];
                if (text.StartsWith("```", StringComparison.Ordinal))
                {
                    inBlock = !inBlock && text.Trim() == "```bash";
                    continue;
                }

                if (!inBlock)
                {
                    // An inline command of the sample (`dotnet run --project samples/BrokerWorker ... -- --help`) runs too.
                    foreach (Match inline in InlinePattern().Matches(text))
                    {
                        yield return (readme, i + 1, inline.Groups[1].Value.Trim());
                    }

                    continue;
                }

                string code = CommentPattern().Replace(text, "").Trim();
                if (code.Length == 0)
                {
                    continue;
                }

                if (pending.Length == 0)
                {
                    start = i + 1;
                }

                if (code.EndsWith('\\'))
                {
                    pending += code[..^1] + " ";
                    continue;
                }

                if (!sampleOnly || (pending + code).StartsWith(Run, StringComparison.Ordinal))
                {
                    yield return (readme, start, pending + code);
                }

                pending = "";
            }
        }
    }

    private static string RepositoryRoot()
    {
        string? dir = AppContext.BaseDirectory;
        while (dir is not null && !File.Exists(Path.Combine(dir, "PriorityAsync.sln")))
        {
            dir = Path.GetDirectoryName(dir);
        }

        return dir ?? throw new InvalidOperationException("The repository root (PriorityAsync.sln) is not above the test's directory.");
    }

    [GeneratedRegex(@"(?:^|\s)#(?:\s.*)?$")]
    private static partial Regex CommentPattern();

    [GeneratedRegex("`(dotnet run --project samples/BrokerWorker[^`]*)`")]
    private static partial Regex InlinePattern();

    [GeneratedRegex("\"([^\"]*)\"|'([^']*)'|\\S+")]
    private static partial Regex WordPattern();

    [GeneratedRegex(@"\b(?:tests|samples)/[A-Za-z0-9_./-]+\.(?:sh|csproj)\b|\btests/[A-Za-z0-9_.-]+(?=\s|$)")]
    private static partial Regex PathPattern();

    // The server scripts and their use, and the hand-made servers' steps (each also in tests/postgres/start.sh or
    // tests/redis/start.sh, which CI runs; RabbitMQ's only by its scripts).
    [GeneratedRegex(@"^(?:eval ""\$\(tests/(?:postgres|redis|rabbitmq)/start\.sh\)""|tests/(?:postgres|redis|rabbitmq)/stop\.sh|trap 'tests/(?:postgres|redis|rabbitmq)/stop\.sh' EXIT|export (?:PATH|PRIORITYASYNC_\w+)=.*|DIR=\$\(mktemp -d .*\)|echo secret > .*|(?:initdb|pg_ctl|psql|redis-server|redis-cli) .*|-c .*)$")]
    private static partial Regex KnownPattern();
}
