using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text.Json;

namespace LeaseWorker;

/// <summary>Writes the results: a table for people, JSON for scripts.</summary>
public static class Report
{
    public const string BaselineNote =
        "single and seed-prioritize run on Nito.AsyncEx's AsyncContext (package Nito.AsyncEx.Context 5.1.2).";

    public static void Write(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results, OutputFormat format)
    {
        ArgumentNullException.ThrowIfNull(output);
        if (format == OutputFormat.Json)
        {
            WriteJson(output, settings, results);
        }
        else
        {
            WriteTable(output, settings, results);
        }
    }

    public static void WriteTable(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(results);
        output.WriteLine();
        output.WriteLine($"Seed settings: {settings.Describe()}.");
        output.WriteLine(
            $"Time scale {settings.TimeScale.ToString(CultureInfo.InvariantCulture)}: 1 s runs as {Format.Duration(settings.Scaled(TimeSpan.FromSeconds(1)))}; " +
            $"times below are as measured. A lease is lost when a refresh is more than {Format.Duration(settings.Scaled(settings.LatenessLimit))} late.");
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

        var widths = new int[header.Length];
        foreach (string[] row in rows)
        {
            for (int i = 0; i < row.Length; i++)
            {
                widths[i] = Math.Max(widths[i], row[i].Length);
            }
        }

        for (int r = 0; r < rows.Count; r++)
        {
            var line = new System.Text.StringBuilder();
            for (int i = 0; i < header.Length; i++)
            {
                // The mode column is left-aligned, numbers right-aligned.
                line.Append(i == 0 ? rows[r][i].PadRight(widths[i]) : rows[r][i].PadLeft(widths[i]));
                line.Append(i + 1 < header.Length ? "  " : string.Empty);
            }

            output.WriteLine(line.ToString().TrimEnd());
            if (r == 0)
            {
                output.WriteLine(new string('-', line.ToString().TrimEnd().Length));
            }
        }

        output.WriteLine();
        foreach (ModeResult r in results)
        {
            string laps = r.SeedLaps is { } l ? $"; {l} queue laps inside the seed's Prioritize" : string.Empty;
            output.WriteLine(
                $"  {r.Mode}: {r.RunsOn}; {r.Bus.FailedRefreshes} refreshes failed, {r.Bus.RejectedAcks} acks rejected{laps}; " +
                $"bystanders: a thread overslept by up to {Format.Duration(r.MachineStall)}, a thread-pool item waited up to {Format.Duration(r.ThreadPoolDelay)}.");
        }

        output.WriteLine($"  {BaselineNote}");
    }

    public static void WriteJson(TextWriter output, Settings settings, IReadOnlyList<ModeResult> results)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(results);
        using var stream = new MemoryStream();
        using (var json = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            json.WriteStartObject();
            json.WriteStartObject("settings");
            json.WriteNumber("messages", settings.Messages);
            json.WriteNumber("steps", settings.Steps);
            json.WriteNumber("cpuSeconds", settings.Cpu.TotalSeconds);
            json.WriteNumber("ioSeconds", settings.Io.TotalSeconds);
            json.WriteString("cpuKind", settings.CpuKind.ToString().ToLowerInvariant());
            json.WriteNumber("receiveSeconds", settings.Receive.TotalSeconds);
            json.WriteNumber("refreshDelaySeconds", settings.RefreshDelay.TotalSeconds);
            json.WriteNumber("refreshSeconds", settings.RefreshDuration.TotalSeconds);
            json.WriteNumber("leaseSeconds", settings.LeaseTimeout.TotalSeconds);
            if (settings.Checkpoint is { } checkpoint)
            {
                json.WriteNumber("checkpointSeconds", checkpoint.TotalSeconds);
            }
            else
            {
                json.WriteNull("checkpointSeconds");
            }

            json.WriteNumber("slicesPerCpuPart", settings.SlicesPerCpuPart);
            json.WriteNumber("timeScale", settings.TimeScale);
            json.WriteNumber("latenessLimitMs", settings.Scaled(settings.LatenessLimit).TotalMilliseconds);
            json.WriteNumber("starvePool", settings.StarvePool);
            json.WriteEndObject();

            json.WriteString("baselineNote", BaselineNote);
            json.WriteStartArray("results");
            foreach (ModeResult r in results)
            {
                json.WriteStartObject();
                json.WriteString("mode", r.Mode);
                json.WriteString("runsOn", r.RunsOn);
                json.WriteNumber("received", r.Bus.Received);
                json.WriteNumber("succeeded", r.Bus.Succeeded);
                json.WriteNumber("lost", r.Bus.Lost);
                json.WriteNumber("failedRefreshes", r.Bus.FailedRefreshes);
                json.WriteNumber("rejectedAcks", r.Bus.RejectedAcks);
                json.WriteNumber("makespanMs", Math.Round(r.Makespan.TotalMilliseconds, 3));
                json.WriteNumber("cpuBoundMs", Math.Round(r.Bound.TotalMilliseconds, 3));
                if (r.CpuThreads is { } threads)
                {
                    json.WriteNumber("cpuBoundThreads", threads);
                }
                else
                {
                    json.WriteNull("cpuBoundThreads");
                }

                json.WriteNumber("makespanOverBound", Math.Round(r.MakespanOverBound, 4));
                json.WriteNumber("cpuTimeMs", Math.Round(r.CpuTime.TotalMilliseconds, 3));
                if (r.LoopCpuTime is { } loop)
                {
                    json.WriteNumber("loopThreadCpuMs", Math.Round(loop.TotalMilliseconds, 3));
                }
                else
                {
                    json.WriteNull("loopThreadCpuMs");
                }

                json.WriteNumber("peakThreads", r.PeakThreads);
                json.WriteNumber("worstRefreshLatenessMs", Math.Round(r.Bus.WorstRefreshLateness.TotalMilliseconds, 3));
                json.WriteNumber("worstTimerLatenessMs", Math.Round(r.WorstTimerLateness.TotalMilliseconds, 3));
                json.WriteNumber("machineStallMs", Math.Round(r.MachineStall.TotalMilliseconds, 3));
                json.WriteNumber("threadPoolDelayMs", Math.Round(r.ThreadPoolDelay.TotalMilliseconds, 3));
                if (r.SeedLaps is { } laps)
                {
                    json.WriteNumber("seedPrioritizeLaps", laps);
                }

                json.WriteEndObject();
            }

            json.WriteEndArray();
            json.WriteEndObject();
        }

        output.WriteLine(System.Text.Encoding.UTF8.GetString(stream.ToArray()));
    }

    private static string Seconds(TimeSpan value) => value.TotalSeconds.ToString("0.000", CultureInfo.InvariantCulture) + " s";
}
