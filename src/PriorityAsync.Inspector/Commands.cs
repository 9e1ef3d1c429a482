using System;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.IO;
using System.Linq;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using Spectre.Console;

namespace PriorityAsync.Inspector;

/// <summary>The three commands: list, inspect (live, once, record) and replay.</summary>
internal static class Commands
{
    private static readonly TimeSpan s_detachTimeout = TimeSpan.FromSeconds(10);

    // How long a target whose runtime closed the session may take to be gone before the tool says it lives on (exit code 1, not 6).
    private static readonly TimeSpan s_exitGrace = TimeSpan.FromSeconds(10);
    private static readonly JsonSerializerOptions s_json = new() { PropertyNamingPolicy = JsonNamingPolicy.CamelCase, WriteIndented = true };

    public static async Task<int> ListAsync(CommandLine line, IAnsiConsole console, TextWriter output)
    {
        var rows = TargetProcess.List();
        if (line.Json)
        {
            await output.WriteLineAsync(JsonSerializer.Serialize(rows, s_json)).ConfigureAwait(false);
            return ExitCodes.Success;
        }

        if (rows.Count == 0)
        {
            console.MarkupLine("[grey]No .NET process with a diagnostics port is running (as this user).[/]");
            return ExitCodes.Success;
        }

        var table = new Table().Border(TableBorder.Simple);
        table.AddColumn(new TableColumn("pid").RightAligned());
        table.AddColumn("name");
        table.AddColumn("PriorityAsync");
        table.AddColumn("command line");
        foreach (ProcessRow row in rows)
        {
            string loads = row.LoadsPriorityAsync switch { true => "yes", false => "no", _ => "?" };
            table.AddRow(
                new Text(row.Id.ToString(CultureInfo.InvariantCulture)),
                new Text(row.Name),
                new Text(loads),
                new Text(row.CommandLine.Length > 80 ? row.CommandLine[..77] + "..." : row.CommandLine));
        }

        console.Write(table);
        return ExitCodes.Success;
    }

    public static async Task<int> InspectAsync(CommandLine line, IAnsiConsole console, TextWriter output, Terminal terminal, CancellationToken cancellationToken)
    {
        (int id, string name) = TargetProcess.Resolve(line.Target!);
        var model = new InspectorModel(line.WindowSeconds) { ProcessId = id, ProcessName = name };
        var options = new SessionOptions(line.SamplePeriodMs, line.AllItemsBelow, line.RecordPath);
        InspectorSession session = InspectorSession.Start(id, model, options);
        await using ConfiguredAsyncDisposable detach = session.ConfigureAwait(false);
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (line.DurationSeconds is { } duration)
        {
            stop.CancelAfter(TimeSpan.FromSeconds(duration));
        }

        // q detaches in every mode, from the first moment: a key on a terminal, else a line on standard input.
        QuitSignal quit = QuitSignal.Start(terminal.Keys);

        // A first scheduler within the attach timeout, or an answer why not.
        await WaitAsync(() => model.HasSchedulers || quit.Requested, session, TimeSpan.FromSeconds(line.AttachTimeoutSeconds), stop.Token).ConfigureAwait(false);
        await ThrowIfTargetExitedAsync(session, id, name, line.RecordPath).ConfigureAwait(false);
        if (!model.HasSchedulers && !stop.IsCancellationRequested && !quit.Requested)
        {
            bool? loads = TargetProcess.LoadsPriorityAsync(id);
            bool keepWatching = loads == true && !line.Once && !line.NoView;
            if (!keepWatching)
            {
                string why = loads switch
                {
                    true => "it loads PriorityAsync, but none of its PriorityContext loops or PriorityThreadPools is running",
                    false => "it does not load PriorityAsync",
                    _ => "no PriorityContext loop or PriorityThreadPool answered",
                };
                throw new InspectorException(ExitCodes.NotPriorityAsync, $"prio: process {id} ({name}) runs no PriorityAsync scheduler: {why} (waited {line.AttachTimeoutSeconds.ToString("0.#", CultureInfo.InvariantCulture)} s; --attach-timeout to wait longer).");
            }
        }

        if (line.Once)
        {
            await WaitAsync(() => quit.Requested, session, TimeSpan.FromSeconds(line.ForSeconds), stop.Token).ConfigureAwait(false);
            await ThrowIfTargetExitedAsync(session, id, name, line.RecordPath).ConfigureAwait(false);
            // Detached first: the stream then ends with everything the target wrote before the stop (an escalation or a long lock
            // wait reported a moment before a q is in the snapshot).
            await session.StopAsync(s_detachTimeout).ConfigureAwait(false);
            Snapshot snapshot = model.TakeSnapshot();
            if (line.Json)
            {
                await output.WriteLineAsync(SnapshotJson.Serialize(snapshot)).ConfigureAwait(false);
            }
            else
            {
                console.Write(SnapshotView.Render(snapshot, "one snapshot", keyHint: false, expand: terminal.Screen));
            }

            return ExitCodes.Success;
        }

        if (line.NoView)
        {
            string how = terminal.Keys ? "q" : "a line q on standard input";
            console.MarkupLine($"Recording process {id} ({Markup.Escape(name)}) to {Markup.Escape(line.RecordPath!)}; {how} or Ctrl+C to stop.");
            await WaitAsync(() => quit.Requested, session, Timeout.InfiniteTimeSpan, stop.Token).ConfigureAwait(false);
        }
        else if (terminal.Screen)
        {
            await LiveAsync(model, session, console, quit, line, stop.Token).ConfigureAwait(false);
        }
        else
        {
            await FramesAsync(model, session, console, quit, line, stop.Token).ConfigureAwait(false);
        }

        await ThrowIfTargetExitedAsync(session, id, name, line.RecordPath).ConfigureAwait(false);
        await session.StopAsync(s_detachTimeout).ConfigureAwait(false);
        if (line.RecordPath is not null)
        {
            console.MarkupLine($"Recorded to {Markup.Escape(line.RecordPath)} ({model.EventCount} events): `prio replay {Markup.Escape(line.RecordPath)}`.");
        }

        return ExitCodes.Success;
    }

    public static async Task<int> ReplayAsync(CommandLine line, IAnsiConsole console, TextWriter output, Terminal terminal)
    {
        string path = line.Target!;
        if (!File.Exists(path))
        {
            throw new InspectorException(ExitCodes.Usage, $"prio: no recording at '{path}'.");
        }

        try
        {
            if (line.ChromePath is { } chrome)
            {
                using FileStream destination = File.Create(chrome);
                int slices = ChromeTrace.Write(path, destination);
                console.MarkupLine($"Wrote {slices} items to {Markup.Escape(chrome)} (open it in https://ui.perfetto.dev).");
                return ExitCodes.Success;
            }

            var model = new InspectorModel(line.WindowSeconds) { ProcessName = Path.GetFileName(path) };
            using (FileStream file = File.OpenRead(path))
            {
                // The recorded process's id is in the stream's header, which every event carries.
                EventStreamReader.Read(file, model, data => model.ProcessId = model.ProcessId == 0 && data.ProcessID > 0 ? data.ProcessID : model.ProcessId);
            }

            Snapshot snapshot = model.TakeSnapshot();
            if (line.Json)
            {
                await output.WriteLineAsync(SnapshotJson.Serialize(snapshot)).ConfigureAwait(false);
            }
            else
            {
                console.Write(SnapshotView.Render(snapshot, "replay: the end of the recording", keyHint: false, expand: terminal.Screen));
            }

            return ExitCodes.Success;
        }
        catch (Exception ex) when (ex is IOException or FormatException or InvalidOperationException or EndOfStreamException or ArgumentException)
        {
            throw new InspectorException(ExitCodes.Usage, $"prio: '{path}' is not a recording prio can read: {ex.Message}", ex);
        }
    }

    /// <summary>The live view on a terminal: one screen, redrawn in place twice a second, until q, Ctrl+C, --duration or the target's end.</summary>
    private static async Task LiveAsync(InspectorModel model, InspectorSession session, IAnsiConsole console, QuitSignal quit, CommandLine line, CancellationToken cancellationToken)
    {
        string status = Status(line);
        await console.Live(SnapshotView.Render(model.TakeSnapshot(), status))
            .AutoClear(false)
            .Overflow(VerticalOverflow.Ellipsis)
            .StartAsync(async context =>
            {
                while (await NextFrameAsync(session, quit, TimeSpan.FromMilliseconds(500), cancellationToken).ConfigureAwait(false)) // drawing is most of the tool's own CPU
                {
                    context.UpdateTarget(SnapshotView.Render(model.TakeSnapshot(), status));
                    context.Refresh();
                }

                context.UpdateTarget(SnapshotView.Render(model.TakeSnapshot(), session.Completion.IsCompleted ? "the target ended the session" : "detached"));
                context.Refresh();
            }).ConfigureAwait(false);
    }

    /// <summary>The live view without a terminal (a file, a pipe, a CI log): a plain frame a second, one after another, each opened by
    /// the header line, until q, Ctrl+C, --duration or the target's end.</summary>
    private static async Task FramesAsync(InspectorModel model, InspectorSession session, IAnsiConsole console, QuitSignal quit, CommandLine line, CancellationToken cancellationToken)
    {
        string status = Status(line);
        while (true)
        {
            console.Write(SnapshotView.Render(model.TakeSnapshot(), status, keyHint: false, expand: false));
            console.WriteLine();
            if (!await NextFrameAsync(session, quit, TimeSpan.FromSeconds(1), cancellationToken).ConfigureAwait(false))
            {
                break;
            }
        }

        console.Write(SnapshotView.Render(model.TakeSnapshot(), session.Completion.IsCompleted ? "the target ended the session" : "detached", keyHint: false, expand: false));
    }

    private static string Status(CommandLine line) => line.RecordPath is { } record ? $"recording to {record}" : "attached";

    /// <summary>Waits a frame's period; false when it is time to stop instead (q, the token, the session's end).</summary>
    private static async Task<bool> NextFrameAsync(InspectorSession session, QuitSignal quit, TimeSpan period, CancellationToken cancellationToken)
    {
        await WaitAsync(() => quit.Requested, session, period, cancellationToken).ConfigureAwait(false);
        return !quit.Requested && !cancellationToken.IsCancellationRequested && !session.Completion.IsCompleted;
    }

    /// <summary>Waits until <paramref name="done"/>, the session's end, the token, or <paramref name="timeout"/>; polls every 50 ms.</summary>
    private static async Task WaitAsync(Func<bool> done, InspectorSession session, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        while (!done() && !session.Completion.IsCompleted && !cancellationToken.IsCancellationRequested
               && (timeout == Timeout.InfiniteTimeSpan || clock.Elapsed < timeout))
        {
            try
            {
                await Task.WhenAny(session.Completion, Task.Delay(50, cancellationToken)).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    /// <summary>After the stream ended without the tool stopping it: exit code 6 when the target has exited, 1 when it lives on.</summary>
    private static async Task ThrowIfTargetExitedAsync(InspectorSession session, int id, string name, string? recordPath)
    {
        if (!session.EndedByTarget)
        {
            return;
        }

        // The runtime closes the session as the process shuts down, a moment before the process is gone: wait for that moment.
        var clock = Stopwatch.StartNew();
        while (TargetProcess.IsAlive(id) && clock.Elapsed < s_exitGrace)
        {
            await Task.Delay(20).ConfigureAwait(false);
        }

        string kept = recordPath is null ? string.Empty : $"; what it saw is in {recordPath}";
        if (!TargetProcess.IsAlive(id))
        {
            throw new InspectorException(ExitCodes.TargetExited, $"prio: process {id} ({name}) exited while the inspector was attached{kept}.");
        }

        // Alive, yet the stream ended: the runtime closed the session, or the stream could not be read.
        string why = session.Completion.Exception?.GetBaseException().Message ?? "its runtime closed the session";
        throw new InspectorException(ExitCodes.Failure, $"prio: the event stream of process {id} ({name}) ended while attached: {why}{kept}.");
    }
}
