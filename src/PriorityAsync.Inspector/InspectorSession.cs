using System;
using System.Collections.Generic;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Diagnostics.NETCore.Client;

namespace PriorityAsync.Inspector;

/// <summary>
/// One EventPipe session on the target's diagnostics port: the <c>PriorityAsync</c> provider at Informational with the <c>Inspector</c>
/// keyword, no stacks, no rundown. The runtime turns the provider off when the session stops, and the library then stops its sampler
/// and clears its slow paths: nothing is left behind in the target.
/// </summary>
internal sealed class InspectorSession : IAsyncDisposable
{
    private readonly EventPipeSession _session;
    private readonly Stream? _record;
    private readonly Task _reader;
    private int _stopping;

    private InspectorSession(int processId, EventPipeSession session, InspectorModel model, Stream? record)
    {
        ProcessId = processId;
        _session = session;
        _record = record;
        Stream stream = record is null ? session.EventStream : new TeeStream(session.EventStream, record);
        _reader = Task.Factory.StartNew(() => EventStreamReader.Read(stream, model), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    public int ProcessId { get; }

    /// <summary>Completes when the stream ends: the session was stopped, or the target exited.</summary>
    public Task Completion => _reader;

    /// <summary>Whether the stream ended without <see cref="StopAsync"/>: the target exited (or its runtime closed the session).</summary>
    public bool EndedByTarget => _reader.IsCompleted && Volatile.Read(ref _stopping) == 0;

    /// <summary>Starts the session. Failures are <see cref="InspectorException"/>s with the exit code that names them.</summary>
    public static InspectorSession Start(int processId, InspectorModel model, SessionOptions options)
    {
        var arguments = new Dictionary<string, string>
        {
            ["SamplePeriodMs"] = options.SamplePeriodMs.ToString(CultureInfo.InvariantCulture),
            ["AllItemsBelow"] = options.AllItemsBelow.ToString(CultureInfo.InvariantCulture),
        };
        long keywords = 0x2 | (options.EveryItem ? 0x1 : 0);
        var provider = new EventPipeProvider(EventStreamReader.ProviderName, EventLevel.Informational, keywords, arguments);
        var configuration = new EventPipeSessionConfiguration([provider], circularBufferSizeMB: 64, requestRundown: false, requestStackwalk: false);
        EventPipeSession session;
        try
        {
            session = new DiagnosticsClient(processId).StartEventPipeSession(configuration);
        }
        catch (Exception ex) when (ex is ServerNotAvailableException or UnauthorizedAccessException or SocketException or IOException or TimeoutException or DiagnosticsClientException)
        {
            if (!TargetProcess.IsAlive(processId))
            {
                throw new InspectorException(ExitCodes.TargetExited, $"prio: process {processId} exited before the inspector could attach.", ex);
            }

            string why = ex is UnauthorizedAccessException || ex.InnerException is UnauthorizedAccessException || (ex as SocketException)?.SocketErrorCode == SocketError.AccessDenied
                ? "permission denied: run prio as the process's user (or root)"
                : "it is not a .NET process, its diagnostics are off (DOTNET_EnableDiagnostics=0), or its port is stale or not reachable from here (a container: share its /tmp)";
            throw new InspectorException(ExitCodes.PortUnavailable, $"prio: cannot open the diagnostics port of process {processId}: {why} ({ex.Message.TrimEnd('.')}).", ex);
        }

        Stream? record = null;
        if (options.RecordPath is { } path)
        {
            try
            {
                record = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.Read);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                session.Stop();
                session.Dispose();
                throw new InspectorException(ExitCodes.Usage, $"prio: cannot write the recording to '{path}': {ex.Message}", ex);
            }
        }

        return new InspectorSession(processId, session, model, record);
    }

    /// <summary>Stops the session (the target's provider turns off) and waits for the stream's end, at most <paramref name="timeout"/>.</summary>
    public async Task StopAsync(TimeSpan timeout)
    {
        if (Interlocked.Exchange(ref _stopping, 1) == 0 && !_reader.IsCompleted)
        {
            try
            {
                await _session.StopAsync(CancellationToken.None).WaitAsync(timeout).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is ServerNotAvailableException or IOException or TimeoutException or DiagnosticsClientException or ObjectDisposedException)
            {
                // The target is gone, or stopping it took too long: the stream ends either way when the session is disposed.
            }
        }

        await Task.WhenAny(_reader, Task.Delay(timeout)).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        _session.Dispose();
        await Task.WhenAny(_reader, Task.Delay(TimeSpan.FromSeconds(10))).ConfigureAwait(false);
        if (_record is not null)
        {
            await _record.DisposeAsync().ConfigureAwait(false);
        }
    }
}
