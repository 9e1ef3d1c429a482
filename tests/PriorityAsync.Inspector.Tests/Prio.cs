using System.Diagnostics;

namespace PriorityAsync.Inspector.Tests;

/// <summary>Runs the tool as its own process (the packaged entry point), bounded.</summary>
internal static class Prio
{
    public static async Task<(int ExitCode, string Output, string Error)> RunAsync(params string[] args)
    {
        using Running running = Start(args);
        return await running.WaitAsync();
    }

    public static Running Start(params string[] args)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true, UseShellExecute = false };
        start.ArgumentList.Add(TestTarget.InspectorDll);
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["COLUMNS"] = "120";
        var running = new Running(Process.Start(start)!, string.Join(' ', args));
        running.StartReading();
        return running;
    }

    /// <summary>The one line a failure writes on standard error (fails the test when there are more).</summary>
    public static string OneLine(string error)
    {
        string[] lines = error.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        lines.Should().ContainSingle("the tool says what went wrong in one line: {0}", error);
        return lines[0];
    }

    /// <summary>The id of a process that has just ended (and been reaped): no process has it, for a while.</summary>
    public static async Task<int> ExitedProcessIdAsync()
    {
        using Process process = Process.Start(new ProcessStartInfo("true") { UseShellExecute = false })!;
        using var timeout = new CancellationTokenSource(TestTarget.Unexpected);
        await process.WaitForExitAsync(timeout.Token);
        return process.Id;
    }

    /// <summary>A running prio.</summary>
    internal sealed class Running(Process process, string arguments) : IDisposable
    {
        private readonly System.Text.StringBuilder _seen = new(); // the output so far, under its own lock
        private readonly Task<string> _error = process.StandardError.ReadToEndAsync();
        private Task? _output;

        /// <summary>Waits until the output so far contains <paramref name="text"/> (a frame that shows it).</summary>
        public async Task WaitForOutputAsync(string text)
        {
            Task output = Pump();
            var deadline = DateTime.UtcNow + TestTarget.Unexpected;
            while (!Seen().Contains(text, StringComparison.Ordinal))
            {
                if (output.IsCompleted || DateTime.UtcNow > deadline)
                {
                    throw new TimeoutException($"prio {arguments} did not show '{text}' (it {(output.IsCompleted ? "ended" : "is still running")}): {Seen()}");
                }

                await Task.Delay(10);
            }
        }

        /// <summary>Starts reading the output as it comes.</summary>
        public void StartReading() => Pump();

        /// <summary>Types q (as a script would, without a terminal) and waits for the end.</summary>
        public async Task<(int ExitCode, string Output, string Error)> QuitAsync()
        {
            await process.StandardInput.WriteLineAsync("q");
            await process.StandardInput.FlushAsync();
            return await WaitAsync();
        }

        public async Task<(int ExitCode, string Output, string Error)> WaitAsync()
        {
            using var timeout = new CancellationTokenSource(TestTarget.Unexpected);
            try
            {
                await process.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException($"prio {arguments} did not end within {TestTarget.Unexpected.TotalSeconds} s.");
            }

            await Pump();
            return (process.ExitCode, Seen(), await _error);
        }

        /// <summary>Reads the output as it comes, from the first call on (a full pipe would stop the tool).</summary>
        private Task Pump() => _output ??= Task.Run(async () =>
        {
            var buffer = new char[4096];
            int read;
            while ((read = await process.StandardOutput.ReadAsync(buffer)) > 0)
            {
                lock (_seen)
                {
                    _seen.Append(buffer, 0, read);
                }
            }
        });

        private string Seen()
        {
            lock (_seen)
            {
                return _seen.ToString();
            }
        }

        public void Dispose()
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }

            process.Dispose();
        }
    }
}
