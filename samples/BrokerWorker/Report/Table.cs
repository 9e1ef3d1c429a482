using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;

namespace BrokerWorker.Report;

/// <summary>The report: one row per mode, counts from the broker, then what the workers saw.</summary>
public static class Table
{
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

        output.WriteLine($"{options.Describe()}");
        output.WriteLine($"bus {options.Bus}, {options.Workers} worker {(options.Bus == "postgres" ? "process(es)" : "(s) in this process")}, {Environment.ProcessorCount} cores; counts from the broker");
        output.WriteLine();
        output.WriteLine("| mode | makespan | CPU bound | ratio | delivered | redelivered | completed | rejected completes | failed renewals | work stopped (lease lost / no progress) | worst renew gap | peak threads | end |");
        output.WriteLine("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        foreach (RunResult r in results)
        {
            string end = r.Stalled
                ? $"stopped: {r.AtEnd.Completed}/{r.AtEnd.Enqueued} completed, {r.AtEnd.Leased} still leased"
                : "all completed";
            string threads = r.PoolMinThreads is { } min ? $"{r.Seen.PeakThreads} (min set {min})" : r.Seen.PeakThreads.ToString(System.Globalization.CultureInfo.InvariantCulture);
            output.WriteLine(
                $"| {r.Mode} | {Format.Sec(r.Makespan)} | {Format.Sec(r.Bound)} | {Format.Ratio(r.Ratio)} | {r.AtEnd.Delivered} | {r.AtEnd.Redelivered} | {r.AtEnd.Completed} | " +
                $"{r.AtEnd.RejectedCompletes} | {r.AtEnd.FailedRenewals} | {r.Seen.StoppedLeaseLost} / {r.Seen.StoppedNoProgress} | {r.Seen.WorstRenewGapMs:0} ms | {threads} | {end} |");
        }

        output.WriteLine();
        output.WriteLine("ratio = makespan / CPU bound (all CPU back to back on the cores the mode can use). Renewals refused, completes rejected,");
        output.WriteLine("deliveries: the broker's own counts. Work stopped: messages whose lease token was cancelled (the worker's view).");
    }
}
