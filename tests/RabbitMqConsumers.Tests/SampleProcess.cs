using System.Collections.Concurrent;
using System.Diagnostics;
using System.IO;
using TestSupport.RabbitMq;

namespace RabbitMqConsumers.Tests;

/// <summary>The sample run as its own process (<c>dotnet RabbitMqConsumers.dll</c>, its copy beside the tests), its lines collected as they come.</summary>
internal sealed class SampleProcess : IDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _lines = new();
    private readonly ConcurrentQueue<string> _errors = new();

    private SampleProcess(Process process)
    {
        _process = process;
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                _lines.Enqueue(e.Data);
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                _errors.Enqueue(e.Data);
            }
        };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    public IReadOnlyList<string> Lines => [.. _lines];

    public IReadOnlyList<string> Errors => [.. _errors];

    public static SampleProcess Start(params string[] arguments)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "RabbitMqConsumers.dll"));
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        info.Environment.Remove("PRIORITYASYNC_RABBITMQ"); // the tests say which broker, always with --connection
        return new SampleProcess(Process.Start(info)!);
    }

    /// <summary>Runs the sample to its end and returns its exit code, its standard output and its standard error.</summary>
    public static async Task<(int ExitCode, IReadOnlyList<string> Output, IReadOnlyList<string> Error)> RunAsync(params string[] arguments)
    {
        using SampleProcess sample = Start(arguments);
        int exitCode = await sample.WaitForExitAsync();
        return (exitCode, sample.Lines, sample.Errors);
    }

    public async Task<int> WaitForExitAsync()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(5));
        try
        {
            await _process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            _process.Kill(entireProcessTree: true);
            throw new TimeoutException($"The sample did not end within 5 minutes. Output: {string.Join('\n', Lines.TakeLast(20))} Errors: {string.Join('\n', Errors)}");
        }

        _process.WaitForExit(); // the last lines of the redirected streams
        return _process.ExitCode;
    }

    /// <summary>Waits until the sample has written <paramref name="count"/> lines starting with <paramref name="prefix"/>.</summary>
    public async Task WaitForLinesAsync(string prefix, int count)
    {
        using var timeout = new CancellationTokenSource(TestBroker.Patience);
        while (Lines.Count(l => l.StartsWith(prefix, StringComparison.Ordinal)) < count)
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"The sample exited {_process.ExitCode} before {count} lines '{prefix}': {string.Join('\n', Errors)}");
            }

            await Task.Delay(10, timeout.Token);
        }
    }

    /// <summary>SIGKILL: no clean-up, no last ack.</summary>
    public void Kill()
    {
        _process.Kill();
        _process.WaitForExit();
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        _process.Dispose();
    }
}
