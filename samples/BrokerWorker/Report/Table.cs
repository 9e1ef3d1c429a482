using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text.Json;
using Samples.Support;

namespace BrokerWorker.Report;

/// <summary>
/// The report: one markdown row per mode, counts from the broker. By default the columns that say what happened, in lines of at
/// most <see cref="Width"/> characters; with --wide every column; with --json one JSON line per run with every measurement.
/// </summary>
public static class Table
{
    public const int Width = Paragraph.Width;

    /// <summary>One sentence on what the experiment is, for a reader who has not read the article.</summary>
    public const string Experiment =
        "The lease-worker experiment of the article \"Async Wandering, part 15\" on a message broker: workers take messages that " +
        "the broker leases to them and keep each lease alive, renewing it while they process the message; a lease not renewed in " +
        "time runs out, and the broker delivers the message again. The same worker runs in the modes below.";

    public static void Write(TextWriter output, Options options, IReadOnlyList<RunResult> results)
    {
        if (options.Json)
        {
            foreach (RunResult r in results)
            {
                output.WriteLine(JsonSerializer.Serialize(r));
            }

            return;
        }

        Paragraph.Write(output, Experiment, string.Empty);
        Paragraph.Write(output, $"Settings, in the article's time: {options.Describe()}.", string.Empty);
        Paragraph.Write(
            output,
            $"Broker: {options.BusName}, {options.Workers} " +
            (options.Bus != "memory" ? $"worker process{(options.Workers == 1 ? "" : "es")}" : $"worker{(options.Workers == 1 ? "" : "s")} in this process") + ", " +
            $"{Environment.ProcessorCount} cores; every count is the broker's own.",
            string.Empty);
        output.WriteLine();
        if (options.Wide)
        {
            WriteWide(output, options, results);
            return;
        }

        output.WriteLine("| mode | took | vs least possible | completed | delivered again | renewals refused | longest without renewal | end |");
        output.WriteLine("|---|---|---|---|---|---|---|---|");
        foreach (RunResult r in results)
        {
            output.WriteLine(
                $"| {r.Mode} | {Format.Sec(r.Makespan)} | {r.Ratio.ToString("0.00", CultureInfo.InvariantCulture)}x | {r.AtEnd.Completed} of {r.AtEnd.Enqueued} | " +
                $"{r.AtEnd.Redelivered} | {r.AtEnd.FailedRenewals} | {r.Seen.WorstRenewGapMs:0} ms | {End(r)} |");
        }

        output.WriteLine();
        WriteLegend(output, "took", $"{Elapsed(options)} from the workers' start until the broker had every message completed, or until the run was stopped");
        WriteLegend(output, "vs least possible", "took, divided by the least time any scheduler needs: all CPU work back to back on the cores " +
            "the mode can use; 1.00x is perfect");
        WriteLegend(output, "completed", "messages the broker counts as done, of the messages put on the queue");
        WriteLegend(output, "delivered again", "deliveries of a message whose previous lease ran out: its work is done again");
        WriteLegend(output, "renewals refused", "renewals that reached the broker after the lease had run out");
        WriteLegend(output, "longest without renewal", $"the longest a message in flight went without a renewal (a lease lasts {Format.Ms(options.Scaled(options.Lease))} in this run)");
        WriteEndLegend(output, options);
        output.WriteLine();
        Paragraph.Write(
            output,
            "The modes. priority: PriorityAsync on one thread; renewals run at a higher level than processing, so a renewal waits " +
            "for the one CPU part running at most. single: one thread, first in first out (Nito.AsyncEx's AsyncContext): a renewal waits behind every CPU " +
            "part queued before it. threadpool: plain async on the .NET thread pool. heartbeat-thread: the single thread plus a " +
            "dedicated thread that renews every lease. priority-threads: PriorityAsync's levels on a PriorityThreadPool, one " +
            "thread per core, several messages' CPU parts at once." +
            (options.VirtualTime ? " On virtual time single runs on a one-level PriorityContext: first in first out, as AsyncContext, and able to drive the clock." : "") +
            " --wide shows every column; --json writes every measurement.",
            "  ");
    }

    private static void WriteWide(TextWriter output, Options options, IReadOnlyList<RunResult> results)
    {
        output.WriteLine("| mode | makespan | CPU bound | ratio | delivered | redelivered | completed | rejected completes | failed renewals | work stopped (lease lost / no progress) | worst renew gap | peak threads | CPU workers | end |");
        output.WriteLine("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        foreach (RunResult r in results)
        {
            string threads = r.PoolMinThreads is { } min ? $"{r.Seen.PeakThreads} (min set {min})"
                : options.VirtualTime ? "-" : r.Seen.PeakThreads.ToString(CultureInfo.InvariantCulture);
            output.WriteLine(
                $"| {r.Mode} | {Format.Sec(r.Makespan)} | {Format.Sec(r.Bound)} | {Format.Ratio(r.Ratio)} | {r.AtEnd.Delivered} | {r.AtEnd.Redelivered} | {r.AtEnd.Completed} | " +
                $"{r.AtEnd.RejectedCompletes} | {r.AtEnd.FailedRenewals} | {r.Seen.StoppedLeaseLost} / {r.Seen.StoppedNoProgress} | {r.Seen.WorstRenewGapMs:0} ms | {threads} | " +
                $"{Format.Sec(TimeSpan.FromMilliseconds(r.Seen.CpuMs))} | {End(r)} |");
        }

        output.WriteLine();
        WriteLegend(output, "makespan", $"{Elapsed(options)} from the workers' start until the broker had every message completed, or until the run was stopped");
        WriteLegend(output, "CPU bound", "the least time any scheduler needs: all CPU work back to back on the cores the mode can use");
        WriteLegend(output, "ratio", "makespan / CPU bound; 1.000 is perfect");
        WriteLegend(output, "delivered", "every delivery the broker made, first ones and again");
        WriteLegend(output, "redelivered", "deliveries of a message whose previous lease ran out: its work is done again");
        WriteLegend(output, "completed", "messages the broker counts as done");
        WriteLegend(output, "rejected completes", "completes that reached the broker after the lease had run out (another delivery owns the message)");
        WriteLegend(output, "failed renewals", "renewals the broker refused: the lease had run out");
        WriteLegend(output, "work stopped", "messages a worker stopped working on, seen by the workers: its lease was lost (a renewal refused) / " +
            "its I/O call had not answered for two leases (priority modes: the lease is given up)");
        WriteLegend(output, "worst renew gap", $"the longest a message in flight went without a renewal (a lease lasts {Format.Ms(options.Scaled(options.Lease))} in this run)");
        WriteLegend(output, "peak threads", "the most .NET thread-pool threads a worker process had when a CPU part started (min set: the " +
            "minimum the threadpool mode sets; -: on virtual time)");
        WriteLegend(output, "CPU workers", "CPU time of the worker processes (in-memory bus: of this process, the broker included)");
        WriteEndLegend(output, options);
    }

    private static void WriteEndLegend(TextWriter output, Options options) =>
        WriteLegend(output, "end", $"all completed, or why the run was stopped: no progress (nothing completed or delivered for " +
            $"{Format.Sec(options.ScaledStallAfter)}, --stall-after: a worker holds a message it never finishes), deadline (not done in " +
            (options.Deadline is { } deadline ? Format.Sec(deadline) : "3 times the least possible time plus that") +
            ": a mode that keeps losing its leases), workers exited; leased: messages a worker still held");

    private static string Elapsed(Options options) => options.VirtualTime ? "time on the run's virtual clock (exact)" : "wall time";

    private static string End(RunResult r) => r.End switch
    {
        RunEnd.Completed => "all completed",
        RunEnd.NoProgress => $"stopped: no progress, {r.AtEnd.Leased} leased",
        RunEnd.Deadline => $"stopped: deadline, {r.AtEnd.Leased} leased",
        _ => $"stopped: workers exited, {r.AtEnd.Leased} leased",
    };

    private static void WriteLegend(TextWriter output, string column, string meaning) =>
        Paragraph.Write(output, $"{column.PadRight(25)}{meaning}", "  ", new string(' ', 27));
}
