using System.Diagnostics;
using System.IO;

namespace PriorityAsync.Inspector.Tests;

/// <summary>
/// The inspector tests' target (tests/PriorityAsync.Inspector.Target) as a real process: started by the test, driven through its
/// standard input, ended (and, if it does not end, killed) on disposal. Every wait is bounded by <see cref="Unexpected"/>.
/// </summary>
internal sealed class TestTarget : IAsyncDisposable
{
    /// <summary>Long enough never to fire on a loaded 2-core CI machine; only a hang reaches it.</summary>
    public static readonly TimeSpan Unexpected = TimeSpan.FromSeconds(60);

    private readonly Process _process;
    private readonly List<string> _lines = [];
    private readonly SemaphoreSlim _lineAdded = new(0);

    private TestTarget(Process process)
    {
        _process = process;
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (_lines)
                {
                    _lines.Add(e.Data);
                }

                _lineAdded.Release();
            }
        };
        process.BeginOutputReadLine();
    }

    public int Id => _process.Id;

    public static string TargetDll() =>
        Path.Combine(RepositoryRoot(), "tests", "PriorityAsync.Inspector.Target", "bin", Configuration, "net10.0", "PriorityAsync.Inspector.Target.dll");

    /// <summary>Found from the test's output directory: on CI the compiler maps source paths to /_/, so a caller's file path names no directory.</summary>
    public static string RepositoryRoot()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "PriorityAsync.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No PriorityAsync.sln above {AppContext.BaseDirectory}.");
    }

    public static string InspectorDll => typeof(Program).Assembly.Location;

    private static string Configuration => Path.GetFileName(Path.GetDirectoryName(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar))!)!; // bin/<Configuration>/net10.0

    public static async Task<TestTarget> StartAsync(string? argument = null, IDictionary<string, string>? environment = null)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardInput = true, RedirectStandardOutput = true, UseShellExecute = false };
        start.ArgumentList.Add(TargetDll());
        if (argument is not null)
        {
            start.ArgumentList.Add(argument);
        }

        foreach ((string key, string value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[key] = value;
        }

        var target = new TestTarget(Process.Start(start)!);
        await target.WaitForLineAsync("ready");
        return target;
    }

    /// <summary>Sends a command and waits for its "done" line.</summary>
    public async Task SendAsync(string command)
    {
        await _process.StandardInput.WriteLineAsync(command);
        await _process.StandardInput.FlushAsync();
        if (command != "exit")
        {
            await WaitForLineAsync("done " + command);
        }
    }

    /// <summary>Waits for a line that starts with <paramref name="prefix"/>, printed since the target started; returns it.</summary>
    public async Task<string> WaitForLineAsync(string prefix, int occurrence = 1)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            lock (_lines)
            {
                var found = _lines.Where(l => l.StartsWith(prefix, StringComparison.Ordinal)).ToList();
                if (found.Count >= occurrence)
                {
                    return found[occurrence - 1];
                }
            }

            TimeSpan left = Unexpected - clock.Elapsed;
            if (left <= TimeSpan.Zero || (_process.HasExited && !await _lineAdded.WaitAsync(TimeSpan.FromSeconds(2))))
            {
                lock (_lines)
                {
                    throw new TimeoutException($"The target never printed '{prefix}' (#{occurrence}). It printed: {string.Join(" | ", _lines)}");
                }
            }

            await _lineAdded.WaitAsync(left);
        }
    }

    /// <summary>Asks the target whether anything of an inspector is left in it.</summary>
    public async Task<string> StatusAsync()
    {
        int before;
        lock (_lines)
        {
            before = _lines.Count(l => l.StartsWith("status ", StringComparison.Ordinal));
        }

        await SendAsync("status");
        return await WaitForLineAsync("status ", before + 1);
    }

    public async Task WaitForExitAsync()
    {
        using var timeout = new CancellationTokenSource(Unexpected);
        await _process.WaitForExitAsync(timeout.Token);
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            try
            {
                await SendAsync("release");
                await SendAsync("exit");
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
                await _process.WaitForExitAsync(timeout.Token);
            }
            catch (Exception ex) when (ex is IOException or OperationCanceledException or TimeoutException or InvalidOperationException)
            {
                _process.Kill(entireProcessTree: true);
            }
        }

        _process.Dispose();
        _lineAdded.Dispose();
    }
}
