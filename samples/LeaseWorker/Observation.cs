using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using PriorityAsync;

namespace LeaseWorker;

/// <summary>
/// <c>--trace FILE.json</c> and <c>--timeline FILE.svg</c>: records the runs and writes the files. The trace is PriorityAsync's own
/// dispatch trace (<see cref="PriorityTraceRecorder"/>, Chrome trace event format) of the priority mode; the timeline shows every mode
/// that ran, side by side, one lane per message. A file that cannot be written is one line on stderr and <see cref="Failed"/>.
/// </summary>
public sealed class Observation(string? tracePath, string? timelinePath)
{
    private readonly List<Timeline> _timelines = [];
    private PriorityTraceRecorder? _recorder;

    /// <summary>A file could not be written (the line saying why is on stderr).</summary>
    public bool Failed { get; private set; }

    /// <summary>Before a mode runs: the timeline to pass to the run, or null.</summary>
    public Timeline? Before(string mode)
    {
        if (tracePath is not null && mode == "priority")
        {
            _recorder = PriorityTraceRecorder.Start();
        }

        if (timelinePath is null)
        {
            return null;
        }

        var timeline = new Timeline(mode);
        _timelines.Add(timeline);
        return timeline;
    }

    /// <summary>After a mode ran: writes the trace if this was the traced run.</summary>
    public void After(string mode)
    {
        if (_recorder is { } recorder && mode == "priority")
        {
            recorder.Stop();
            Write(tracePath!, () => recorder.WriteChromeTrace(tracePath!), string.Create(CultureInfo.InvariantCulture,
                $"{recorder.RecordedCount} items of the priority run, {recorder.OverflowCount} not recorded for lack of room"));
            _recorder = null;
        }
    }

    /// <summary>After every mode ran: writes the timeline.</summary>
    public void Finish(Settings settings)
    {
        if (timelinePath is not null && _timelines.Count > 0)
        {
            Write(
                timelinePath,
                () => TimelineSvg.Write(timelinePath, _timelines, $"{settings.Describe()}. Time scale {settings.TimeScale.ToString(CultureInfo.InvariantCulture)}: " +
                    (settings.VirtualTime ? "virtual times, exact." : "times as measured.")),
                $"{_timelines.Count} modes");
        }
    }

    private void Write(string path, Action write, string what)
    {
        try
        {
            write();
            Console.Error.WriteLine($"LeaseWorker: wrote {path} ({what}).");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"LeaseWorker: could not write {path}: {e.Message}");
            Failed = true;
        }
    }
}
