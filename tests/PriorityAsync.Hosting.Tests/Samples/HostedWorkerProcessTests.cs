using System.Diagnostics;
using System.IO;
using System.Text.Json;
using MessageBus;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests.Samples;

/// <summary>The HostedWorker sample as a real process: SIGTERM drains it, exit code 0, and the bus's counts show nothing lost.</summary>
public sealed class HostedWorkerProcessTests
{
    [Fact]
    public async Task Sigterm_WhileMessagesAreInFlight_AbandonsEachOfThemAndExitsZero()
    {
        // Messages that take minutes of CPU: the four in flight cannot finish before the signal, so each must be abandoned.
        // A long lease: the test checks draining, not renewal on a loaded machine.
        using Process worker = StartWorker(
            ["--messages", "1000", "--work", "600s", "--concurrency", "4", "--lease", "30s", "--renew-every", "200ms"],
            debugLog: true);
        var output = new OutputLines(worker);
        for (int id = 1; id <= 4; id++)
        {
            await output.WaitForAsync(line => line.Contains($"Received message {id} (delivery 1).", StringComparison.Ordinal), $"message {id} to be received");
        }

        await output.WaitForAsync(HostStarted, "the host to have started");
        await SigtermAsync(worker);

        await worker.WaitForExitAsync().Within("the worker to exit after SIGTERM");
        string stdout = await output.AllAsync();
        worker.ExitCode.Should().Be(0, stdout);
        ParseCounts(stdout).Should().Be(
            new BusCounts(Enqueued: 1000, Delivered: 4, Redelivered: 0, Completed: 0, RejectedCompletes: 0, FailedRenewals: 0, Abandoned: 4, Leased: 0, Available: 1000, ExpiredRedeliveries: 0),
            "the four messages in flight were handed back at once, and nothing else was taken");
        output.Stderr.Should().BeEmpty();
    }

    [Fact]
    public async Task Sigterm_AfterMessagesCompleted_EveryDeliveryEndsCompletedOrAbandonedAndNothingIsLost()
    {
        // Short messages: at the signal some are in flight (abandoned) and some in their last step (completed: finished work is
        // not thrown away). Which, depends on the moment; the invariants below do not.
        using Process worker = StartWorker(
            ["--messages", "1000000", "--work", "20ms", "--concurrency", "4", "--lease", "30s", "--renew-every", "200ms", "--progress-every", "10"],
            debugLog: false);
        var output = new OutputLines(worker);
        await output.WaitForAsync(line => line.Contains("messages completed.", StringComparison.Ordinal), "the worker to complete its first messages");
        await output.WaitForAsync(HostStarted, "the host to have started");

        await SigtermAsync(worker);

        await worker.WaitForExitAsync().Within("the worker to exit after SIGTERM");
        string stdout = await output.AllAsync();
        worker.ExitCode.Should().Be(0, stdout);
        BusCounts counts = ParseCounts(stdout);
        counts.Enqueued.Should().Be(1_000_000);
        counts.Leased.Should().Be(0, "every lease was completed or abandoned before exit");
        (counts.Completed + counts.Available).Should().Be(counts.Enqueued, "nothing is lost");
        counts.Completed.Should().BeGreaterThanOrEqualTo(10);
        counts.Delivered.Should().Be(counts.Completed + counts.Abandoned, "every delivery ended in a complete or an abandon, none in an expiry");
        counts.Abandoned.Should().BeLessThanOrEqualTo(4, "at most the four messages in flight");
        counts.Redelivered.Should().Be(0);
        counts.RejectedCompletes.Should().Be(0);
        counts.FailedRenewals.Should().Be(0);
        output.Stderr.Should().BeEmpty();
    }

    [Fact]
    public async Task QueueDrained_WorkerStopsTheHostItselfAndEverythingIsCompleted()
    {
        using Process worker = StartWorker(["--messages", "12", "--work", "2ms", "--checkpoint", "1ms", "--progress-every", "4"], debugLog: false);
        var output = new OutputLines(worker);

        await worker.WaitForExitAsync().Within("the worker to finish the queue");
        string stdout = await output.AllAsync();

        worker.ExitCode.Should().Be(0, stdout);
        ParseCounts(stdout).Should().Be(new BusCounts(12, 12, 0, 12, 0, 0, 0, 0, 0, 0));
    }

    [Theory]
    [InlineData("--concurrency", "0")]
    [InlineData("--lease", "100ms", "--renew-every", "100ms")]
    [InlineData("--messages")]
    [InlineData("--nonsense", "1")]
    public async Task BadArguments_OneLineOnStderrExitCode2(params string[] args)
    {
        using Process worker = StartWorker(args, debugLog: false);
        var output = new OutputLines(worker);

        await worker.WaitForExitAsync().Within("the worker to reject its arguments");
        await output.AllAsync();

        worker.ExitCode.Should().Be(2);
        output.Stderr.Should().ContainSingle().Which.Should().StartWith("HostedWorker: ");
    }

    // The Generic Host's line once every hosted service has started. The worker's own lines can come before it, and a signal sent
    // before it lands in the host's start-up (docs/hosting.md, "Ctrl+C during start-up"), not in the drain these tests check.
    private static bool HostStarted(string line) => line.Contains("Application started.", StringComparison.Ordinal);

    private static BusCounts ParseCounts(string stdout)
    {
        string json = stdout.Split('\n').Select(l => l.Trim()).Last(l => l.StartsWith('{'));
        return JsonSerializer.Deserialize<BusCounts>(json)!;
    }

    private static async Task SigtermAsync(Process worker)
    {
        // The shell's own kill: present wherever /bin/sh is, unlike the procps binary.
        using Process kill = Process.Start("/bin/sh", ["-c", $"kill -TERM {worker.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)}"]);
        await kill.WaitForExitAsync().Within("kill");
        kill.ExitCode.Should().Be(0);
    }

    private static Process StartWorker(string[] args, bool debugLog)
    {
        // tests/PriorityAsync.Hosting.Tests/bin/<Configuration>/net10.0/ -> samples/HostedWorker/bin/<Configuration>/net10.0/
        string dll = Path.Combine(
            AppContext.BaseDirectory.Replace(
                Path.Combine("tests", "PriorityAsync.Hosting.Tests"),
                Path.Combine("samples", "HostedWorker"),
                StringComparison.Ordinal),
            "HostedWorker.dll");
        File.Exists(dll).Should().BeTrue($"the sample is built beside the tests ({dll})");

        var start = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = Path.GetDirectoryName(dll)!,
        };
        if (debugLog)
        {
            start.Environment["Logging__LogLevel__HostedWorker"] = "Debug";
        }

        start.ArgumentList.Add(dll);
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        return Process.Start(start)!;
    }

    /// <summary>Collects a process's output lines as they come, and lets a test wait for one.</summary>
    private sealed class OutputLines
    {
        private readonly object _gate = new();
        private readonly List<string> _stdout = [];
        private readonly List<string> _stderr = [];
        private readonly List<(Func<string, bool> Match, TaskCompletionSource Found)> _waiters = [];
        private readonly Task _stdoutDone;
        private readonly Task _stderrDone;

        public OutputLines(Process process)
        {
            _stdoutDone = PumpAsync(process.StandardOutput, _stdout);
            _stderrDone = PumpAsync(process.StandardError, _stderr);
        }

        public IReadOnlyList<string> Stderr
        {
            get
            {
                lock (_gate)
                {
                    return [.. _stderr];
                }
            }
        }

        public Task WaitForAsync(Func<string, bool> match, string what)
        {
            var found = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (_gate)
            {
                if (_stdout.Any(match))
                {
                    return Task.CompletedTask;
                }

                _waiters.Add((match, found));
            }

            return found.Task.Within(what);
        }

        public async Task<string> AllAsync()
        {
            await Task.WhenAll(_stdoutDone, _stderrDone).Within("the process's output to end");
            lock (_gate)
            {
                return string.Join('\n', _stdout);
            }
        }

        private async Task PumpAsync(StreamReader reader, List<string> lines)
        {
            while (await reader.ReadLineAsync() is { } line)
            {
                lock (_gate)
                {
                    lines.Add(line);
                    foreach (var waiter in _waiters.Where(w => ReferenceEquals(lines, _stdout) && w.Match(line)).ToArray())
                    {
                        waiter.Found.TrySetResult();
                        _waiters.Remove(waiter);
                    }
                }
            }
        }
    }
}
