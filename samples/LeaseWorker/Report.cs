using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using LeaseWorker.Core;
using Samples.Support;

namespace LeaseWorker;

/// <summary>Writes the results: a table for people, JSON for scripts.</summary>
public static class Report
{
    public const string BaselineNote =
        "single and seed-prioritize run on Nito.AsyncEx's AsyncContext (package Nito.AsyncEx.Context 5.1.2).";

    /// <summary>The baseline note of a run on virtual time.</summary>
    public const string VirtualBaselineNote =
        "On virtual time, single and seed-prioritize run on a one-level PriorityContext: first-in-first-out on one thread, as " +
        "Nito.AsyncEx's AsyncContext is, and able to drive the virtual clock.";

    /// <summary>What the intro says of a run on virtual time.</summary>
    public const string VirtualTimeNote =
        "On virtual time: each run has a clock of its own, every CPU part advances it, every wait is a timer on it, and the loop jumps " +
        "it to the next timer when it has nothing to run; the times below are exact, the same on any machine at any load.";

    // Relaxed escaping: the notes' apostrophes and plus signs as they are. A ratio over a zero bound is written "Infinity".
    private static readonly JsonSerializerOptions s_json = new(JsonSerializerDefaults.Web)
    {
        WriteIndented = true,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
        Converters = { new SecondsConverter(), new JsonStringEnumConverter(JsonNamingPolicy.CamelCase) },
    };

    /// <summary>One sentence on what the experiment is, for a reader who has not read the article.</summary>
    public const string Experiment =
        "The lease-worker experiment of the article \"Async Wandering, part 15\": a worker takes messages from a bus that leases " +
        "them and keeps each lease alive, refreshing it while it processes the message; a lease not refreshed in time is lost, " +
        "and its message with it. The same worker runs on the schedulers below (the modes).";

    /// <summary>What the experiment is and its settings, wrapped to <see cref="Paragraph.Width"/>: printed before the runs.</summary>
    public static void WriteIntro(TextWriter output, Settings settings)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(settings);
        Paragraph.Write(output, Experiment, string.Empty);
        Paragraph.Write(
            output,
            $"Settings, in the article's time: {settings.Describe()}. Time scale {settings.TimeScale.ToString(CultureInfo.InvariantCulture)}: " +
            $"1 s runs as {Format.Duration(settings.Scaled(TimeSpan.FromSeconds(1)))}; " +
            (settings.VirtualTime ? VirtualTimeNote : "the times below are as measured."),
            string.Empty);
        output.WriteLine();
    }

    /// <summary>The results: the table that fits <see cref="Paragraph.Width"/> columns, the wide one (--wide) or JSON (--json).</summary>
    public static void Write(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results, bool json, bool wide)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(results);
        if (json)
        {
            WriteJson(output, settings, results);
        }
        else if (wide)
        {
            WriteWideTable(output, settings, results);
        }
        else
        {
            WriteTable(output, settings, results);
        }
    }

    /// <summary>The table that fits <see cref="Paragraph.Width"/> columns: what was lost, how long it took, and why, in plain words.</summary>
    private static void WriteTable(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results)
    {
        var rows = new List<string[]> { new[] { "mode", "lost", "took", "vs least possible", "latest refresh", "loop thread CPU" } };
        foreach (ModeResult r in results)
        {
            rows.Add(
            [
                r.Mode,
                $"{r.Bus.Lost} of {r.Bus.Received}",
                Seconds(r.Makespan),
                r.MakespanOverBound.ToString("0.00", CultureInfo.InvariantCulture) + "x",
                Format.Duration(r.Bus.WorstRefreshLateness),
                r.LoopCpuTime is { } loop ? Seconds(loop) : "n/a",
            ]);
        }

        output.WriteLine();
        WriteRows(output, rows);
        output.WriteLine();
        string limit = Format.Duration(settings.Scaled(settings.LatenessLimit));
        WriteLegend(output, "lost", "messages whose lease ran out before the worker finished them, as the bus counted them");
        WriteLegend(output, "took", $"{(settings.VirtualTime ? "virtual" : "wall")} time until every message was finished or lost");
        WriteLegend(output, "vs least possible", "took, divided by the least time any scheduler needs for this much CPU work: 1.00x is perfect; " +
            "below 1 only because lost messages were never finished");
        WriteLegend(output, "latest refresh", $"how much later than planned the most overdue lease refresh reached the bus; above {limit} its lease is lost");
        WriteLegend(output, "loop thread CPU", "CPU time of the one thread that runs the worker: with sleeping CPU parts, the scheduling's own cost");
        output.WriteLine();
        WriteModes(output, results, settings);
        Paragraph.Write(output, "--wide shows every column and the machine's own delays; --json writes every measurement for a script.", "  ");
    }

    /// <summary>Every column, about 180 characters wide (--wide), and per mode the failed refreshes and the machine's own delays.</summary>
    private static void WriteWideTable(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results)
    {
        output.WriteLine($"A lease is lost when a refresh is more than {Format.Duration(settings.Scaled(settings.LatenessLimit))} late.");
        output.WriteLine();

        string[] header = ["mode", "received", "succeeded", "lost", "makespan", "CPU bound", "makespan/bound", "CPU time", "loop thread CPU", "peak threads", "worst refresh lateness", "worst timer lateness"];
        var rows = new List<string[]> { header };
        foreach (ModeResult r in results)
        {
            rows.Add(
            [
                r.Mode,
                r.Bus.Received.ToString(CultureInfo.InvariantCulture),
                r.Bus.Succeeded.ToString(CultureInfo.InvariantCulture),
                r.Bus.Lost.ToString(CultureInfo.InvariantCulture),
                Seconds(r.Makespan),
                Seconds(r.Bound) + (r.CpuThreads is { } t ? $" ({t} thr)" : " (no limit)"),
                r.MakespanOverBound.ToString("0.000", CultureInfo.InvariantCulture),
                Seconds(r.CpuTime),
                r.LoopCpuTime is { } loop ? Seconds(loop) : "n/a",
                r.PeakThreads.ToString(CultureInfo.InvariantCulture),
                Format.Duration(r.Bus.WorstRefreshLateness),
                Format.Duration(r.WorstTimerLateness),
            ]);
        }

        WriteRows(output, rows);
        output.WriteLine();
        foreach (ModeResult r in results)
        {
            string laps = r.SeedLaps is { } l ? $"; {l} trips of a continuation round the queue inside the article's Prioritize" : string.Empty;
            string machine = settings.VirtualTime
                ? "on virtual time the machine's own delays change nothing."
                : $"the machine itself: a thread sleeping 5 ms at a time woke up to {Format.Duration(r.MachineStall)} late, a thread-pool " +
                  $"work item waited up to {Format.Duration(r.ThreadPoolDelay)} to start.";
            Paragraph.Write(
                output,
                $"{r.Mode}: {r.RunsOn}; {r.Bus.FailedRefreshes} refreshes failed, {r.Bus.RejectedAcks} acknowledgements rejected{laps}; {machine}",
                "  ");
        }

        Paragraph.Write(output, settings.VirtualTime ? VirtualBaselineNote : BaselineNote, "  ");
    }

    /// <summary>
    /// Every measurement, for a script: the settings (in the article's time), the baseline note, and each mode's <see cref="ModeResult"/>
    /// with the bus's counts under <c>bus</c>. Names in camelCase, every duration in seconds.
    /// </summary>
    private static void WriteJson(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results)
    {
        string baselineNote = settings.VirtualTime ? VirtualBaselineNote : BaselineNote;
        output.WriteLine(JsonSerializer.Serialize(new { settings, baselineNote, results }, s_json));
    }

    private static void WriteModes(TextWriter output, IReadOnlyList<ModeResult> results, Settings settings) => Paragraph.Write(
        output,
        (settings.VirtualTime ? string.Empty : "threadpool: plain async on the .NET thread pool. ") +
        "single: one thread that runs continuations first-in-first-out " +
        (settings.VirtualTime ? "(a one-level PriorityContext, as AsyncContext a FIFO). " : "(Nito.AsyncEx's AsyncContext). ") +
        "seed-prioritize: that thread with the article's fix, a Prioritize that puts continuations " +
        "back in the queue until the most urgent one runs. priority: one thread with PriorityAsync's levels, lease refreshes 2 > " +
        "processing 1 > receiving 0." +
        (results.Any(r => r.Mode == PriorityThreadsMode.ModeName)
            ? " priority-threads: the same levels on a PriorityThreadPool, one thread per core; its CPU bound counts that many threads."
            : string.Empty),
        "  ");

    private static void WriteLegend(TextWriter output, string column, string meaning) =>
        Paragraph.Write(output, $"{column.PadRight(19)}{meaning}", "  ", new string(' ', 21));

    // Columns separated by two spaces; the first left-aligned, numbers right-aligned; a rule under the header.
    private static void WriteRows(TextWriter output, List<string[]> rows)
    {
        int[] widths = [.. Enumerable.Range(0, rows[0].Length).Select(i => rows.Max(row => row[i].Length))];
        for (int r = 0; r < rows.Count; r++)
        {
            string line = string.Join("  ", rows[r].Select((cell, i) => i == 0 ? cell.PadRight(widths[i]) : cell.PadLeft(widths[i]))).TrimEnd();
            output.WriteLine(line);
            if (r == 0)
            {
                output.WriteLine(new string('-', line.Length));
            }
        }
    }

    private static string Seconds(TimeSpan value) => value.TotalSeconds.ToString("0.000", CultureInfo.InvariantCulture) + " s";
}
