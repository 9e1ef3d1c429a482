using System.Diagnostics;
using System.IO;
using System.Net.Sockets;

namespace TestSupport.RabbitMq;

/// <summary>
/// A throwaway node of tests/rabbitmq/start.sh: its URI and its directory, whose scripts the tests use to break it. A test that kills
/// a node or closes its connections starts one of its own (<see cref="StartAsync"/>), so that the other test assemblies, which
/// run at the same time against the shared node, are not disturbed.
/// </summary>
internal sealed record TestNode(Uri Uri, string DataDirectory) : IAsyncDisposable
{
    // start.sh, node.sh and rabbitmqctl each boot an Erlang VM: about a second on an idle machine, a minute and more beside the
    // CPU-bound processes of tests/under-load.sh. A bound on a hang, not on the time: it fails loudly when it runs out.
    private static readonly TimeSpan s_scriptPatience = TimeSpan.FromMinutes(5);

    /// <summary>Starts a node of its own with tests/rabbitmq/start.sh (about 6 s; it picks free ports).</summary>
    public static async Task<TestNode> StartAsync()
    {
        string output = await RunAsync(Path.Combine(RepositoryRoot(), "tests", "rabbitmq", "start.sh"));
        string Value(string name) => output.Split('\n').Single(l => l.StartsWith($"export {name}=", StringComparison.Ordinal))
            .Split('=', 2)[1].Trim().Trim('\'');
        return new TestNode(new Uri(Value(TestBroker.Variable)), Value(TestBroker.DataVariable));
    }

    /// <summary>Runs <c>rabbitmqctl</c> of this node (for example <c>close_all_connections reason</c>) and returns its output.</summary>
    public Task<string> CtlAsync(params string[] arguments) => RunAsync(Path.Combine(DataDirectory, "rabbitmqctl"), arguments);

    /// <summary>
    /// Kills the node with SIGKILL (no shutdown) and starts it again exactly as start.sh did (its node.sh), then waits until it accepts
    /// AMQP connections: what survives is what the node had written (durable queues, the persistent messages it confirmed).
    /// </summary>
    public async Task CrashAndRestartAsync()
    {
        string pidFile = Path.Combine(DataDirectory, "rabbitmq.pid");
        int pid = int.Parse(File.ReadAllText(pidFile).Trim(), System.Globalization.CultureInfo.InvariantCulture);
        using (Process node = Process.GetProcessById(pid))
        {
            node.Kill();
            await node.WaitForExitAsync().WaitAsync(TestBroker.Patience);
        }

        File.Delete(pidFile);
        await RunAsync(Path.Combine(DataDirectory, "node.sh"));
        using var timeout = new CancellationTokenSource(s_scriptPatience);
        while (!File.Exists(pidFile) || !await AcceptsAsync())
        {
            await Task.Delay(100, timeout.Token);
        }
    }

    /// <summary>Stops the node and removes its directory (tests/rabbitmq/stop.sh).</summary>
    public async ValueTask DisposeAsync() => await RunAsync(Path.Combine(RepositoryRoot(), "tests", "rabbitmq", "stop.sh"), DataDirectory);

    /// <summary>The clone's root folder, the one with PriorityAsync.sln, above the test assembly.</summary>
    public static string RepositoryRoot()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "PriorityAsync.sln")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException($"No PriorityAsync.sln above {AppContext.BaseDirectory}.");
    }

    private static async Task<string> RunAsync(string file, params string[] arguments)
    {
        var info = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(info)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        try
        {
            await process.WaitForExitAsync().WaitAsync(s_scriptPatience);
        }
        catch (TimeoutException)
        {
            process.Kill(entireProcessTree: true); // a hung rabbitmqctl would keep the node's epmd from stopping
            throw new TimeoutException($"{Path.GetFileName(file)} {string.Join(' ', arguments)} did not end within {s_scriptPatience.TotalMinutes} minutes.");
        }

        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{Path.GetFileName(file)} {string.Join(' ', arguments)} exited {process.ExitCode}: {await error} {await output}");
        }

        return await output;
    }

    private async Task<bool> AcceptsAsync()
    {
        try
        {
            using TcpClient client = new();
            await client.ConnectAsync(Uri.Host, Uri.Port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
