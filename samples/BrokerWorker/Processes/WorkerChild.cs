using System;
using System.Diagnostics;
using System.IO;
using System.Text;
using System.Text.Json;
using System.Threading.Tasks;
using BrokerWorker.Bus;

namespace BrokerWorker.Processes;

/// <summary>One worker process seen from the coordinator: this executable started again with its settings in <see cref="WorkerProcess.Variable"/>.</summary>
public sealed class WorkerChild : IDisposable
{
    private readonly Process _process;
    private readonly TaskCompletionSource<bool> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly StringBuilder _stderr = new();

    private WorkerChild(Process process)
    {
        _process = process;
        _process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                _ready.TrySetResult(false);
            }
            else if (e.Data == "ready")
            {
                _ready.TrySetResult(true);
            }
            else if (e.Data.StartsWith('{'))
            {
                Stats = JsonSerializer.Deserialize<ProcessStats>(e.Data);
            }
        };
        _process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (_stderr)
                {
                    _stderr.AppendLine(e.Data);
                }
            }
        };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>The statistics line the process printed at exit; null if it was killed.</summary>
    public ProcessStats? Stats { get; private set; }

    /// <summary>Starts a worker process with <paramref name="options"/> (<see cref="Coordinator.WorkerOptions"/>). Its settings and the
    /// connection string travel in the environment (the broker's own variable), never on a command line.</summary>
    public static WorkerChild Start(Options options, string connection)
    {
        var info = new ProcessStartInfo
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        (string file, string? entry) = Self();
        info.FileName = file;
        if (entry is not null)
        {
            info.ArgumentList.Add(entry);
        }

        info.Environment[WorkerProcess.Variable] = JsonSerializer.Serialize(options);
        info.Environment[BusFactory.Kind(options.Bus)!.Variable] = connection;
        return new WorkerChild(Process.Start(info)!);
    }

    /// <summary>How to start this program again: its apphost, or <c>dotnet</c> and its entry assembly.</summary>
    public static (string File, string? Entry) Self()
    {
        string entry = typeof(WorkerChild).Assembly.Location;
        string? path = Environment.ProcessPath;
        return path is not null && Path.GetFileNameWithoutExtension(path) == Path.GetFileNameWithoutExtension(entry)
            ? (path, null)
            : ("dotnet", entry);
    }

    public async Task<bool> WaitReadyAsync(TimeSpan timeout)
    {
        Task finished = await Task.WhenAny(_ready.Task, Task.Delay(timeout));
        return finished == _ready.Task && _ready.Task.Result;
    }

    public void Go()
    {
        _process.StandardInput.WriteLine("go");
        _process.StandardInput.Flush();
    }

    /// <summary>SIGKILL: no abandon, no last word; its leases expire in the database.</summary>
    public void Kill() => _process.Kill();

    /// <summary>The exit code, once exited.</summary>
    public int ExitCode => _process.ExitCode;

    /// <summary>Graceful stop: end of input.</summary>
    public void Stop()
    {
        try
        {
            _process.StandardInput.Close();
        }
        catch (IOException)
        {
            // Already gone.
        }
    }

    public async Task WaitForExitAsync(TimeSpan timeout)
    {
        Task exited = _process.WaitForExitAsync();
        if (await Task.WhenAny(exited, Task.Delay(timeout)) != exited)
        {
            _process.Kill();
        }

        await _process.WaitForExitAsync();
    }

    public string Describe()
    {
        lock (_stderr)
        {
            return _stderr.Length > 0 ? _stderr.ToString().Trim() : (HasExited ? $"exit code {_process.ExitCode}" : "no answer");
        }
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
        }

        _process.Dispose();
    }
}
