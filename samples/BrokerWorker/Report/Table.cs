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
            $"Bus {options.Bus}, {options.Workers} " +
            (options.Bus == "postgres" ? $"worker process{(options.Workers == 1 ? "" : "es")}" : $"worker{(options.Workers == 1 ? "" : "s")} in this process") + ", " +
            $"{Environment.ProcessorCount} cores; every count is the broker's own.",
            string.Empty);
        output.WriteLine();
        if (options.Wide)
        {
            WriteWide(output, results);
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
        WriteLegend(output, "took", "wall time until the broker had every message completed (or the run was stopped)");
        WriteLegend(output, "vs least possible", "took, divided by the least time any scheduler needs: all CPU work back to back on the cores " +
            "the mode can use; 1.00x is perfect");
        WriteLegend(output, "delivered again", "deliveries after a lease ran out: work done twice");
        WriteLegend(output, "renewals refused", "renewals that reached the broker after the lease had run out");
        WriteLegend(output, "longest without renewal", $"the longest a message in flight went without a renewal (a lease lasts {Format.Ms(options.Scaled(options.Lease))} as it runs)");
        output.WriteLine();
        Paragraph.Write(
            output,
            "priority: PriorityAsync, renewals at level 2 above processing. single: one thread, first-in-first-out (Nito.AsyncEx's " +
            "AsyncContext). threadpool: plain async on the .NET thread pool. heartbeat-thread: the single thread plus a dedicated " +
            "thread that renews. priority-threads: PriorityAsync's levels on a PriorityThreadPool, one thread per core, several " +
            "messages' CPU parts at once. --wide shows every column; --json writes every measurement.",
            "  ");
    }

    private static void WriteWide(TextWriter output, IReadOnlyList<RunResult> results)
    {
        output.WriteLine("| mode | makespan | CPU bound | ratio | delivered | redelivered | completed | rejected completes | failed renewals | work stopped (lease lost / no progress) | worst renew gap | peak threads | end |");
        output.WriteLine("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        foreach (RunResult r in results)
        {
            string threads = r.PoolMinThreads is { } min ? $"{r.Seen.PeakThreads} (min set {min})" : r.Seen.PeakThreads.ToString(CultureInfo.InvariantCulture);
            output.WriteLine(
                $"| {r.Mode} | {Format.Sec(r.Makespan)} | {Format.Sec(r.Bound)} | {Format.Ratio(r.Ratio)} | {r.AtEnd.Delivered} | {r.AtEnd.Redelivered} | {r.AtEnd.Completed} | " +
                $"{r.AtEnd.RejectedCompletes} | {r.AtEnd.FailedRenewals} | {r.Seen.StoppedLeaseLost} / {r.Seen.StoppedNoProgress} | {r.Seen.WorstRenewGapMs:0} ms | {threads} | {End(r)} |");
        }

        output.WriteLine();
        Paragraph.Write(
            output,
            "ratio = makespan / CPU bound (all CPU back to back on the cores the mode can use). Renewals refused (failed renewals), " +
            "completes rejected, deliveries: the broker's own counts. Work stopped: messages whose lease token was cancelled (the " +
            "worker's view). Peak threads: the most threads inside a CPU part at once.",
            string.Empty);
    }

    private static string End(RunResult r) => r.Stalled
        ? $"stopped: {r.AtEnd.Completed}/{r.AtEnd.Enqueued} completed, {r.AtEnd.Leased} still leased"
        : "all completed";

    private static void WriteLegend(TextWriter output, string column, string meaning) =>
        Paragraph.Write(output, $"{column.PadRight(25)}{meaning}", "  ", new string(' ', 27));
}
