using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;

namespace Results;

/// <summary>The table: one row per variant and size.</summary>
internal static class Report
{
    public static void WriteHeader(TextWriter output, Settings settings) =>
        output.WriteLine(Invariant(
            $"Responses arrive over {Ms(settings.Window)} in up to {Workload.MaxBatches} batches (every call of a batch ready at once); processing a result costs {settings.Work.TotalMicroseconds:0} us of CPU; one call in {settings.UrgentEvery} is urgent."));

    public static void WriteTable(TextWriter output, IReadOnlyList<RunResult> results)
    {
        output.WriteLine();
        output.WriteLine("      calls  variant          total      last urgent   CPU time    CPU/result   alloc/result  urgent overtaken");
        output.WriteLine("-----------------------------------------------------------------------------------------------------------------");
        foreach (RunResult r in results)
        {
            string name = Variants.Name(r.Variant);
            if (!r.Measured)
            {
                string estimate = r.Cpu > TimeSpan.Zero
                    ? Invariant($"{"~" + Seconds(r.Cpu),-9} {"~" + r.CpuMicrosecondsPerResult.ToString("N1", CultureInfo.InvariantCulture),9} us  {"~" + r.BytesPerResult.ToString("N0", CultureInfo.InvariantCulture),10} B  extrapolated")
                    : "(no smaller run to extrapolate from)";
                output.WriteLine(Invariant($"{r.Calls,11:N0}  {name,-15} {"not run",-10} {"",-12}  {estimate}"));
                continue;
            }

            output.WriteLine(Invariant(
                $"{r.Calls,11:N0}  {name,-15} {Ms(r.Total),-10} {Ms(r.LastUrgent),-12}  {Seconds(r.Cpu),-9} {r.CpuMicrosecondsPerResult,9:N1} us  {r.BytesPerResult,10:N0} B  {r.OvertakenUrgent,6:N0} of {r.UrgentCalls:N0}"));
        }

        output.WriteLine();
        output.WriteLine("  total: from the first call to the last result processed. last urgent: to the last urgent result processed.");
        output.WriteLine("  CPU time: the whole process (all threads) during the run. alloc: GC.GetTotalAllocatedBytes(precise: true).");
        output.WriteLine("  urgent overtaken: urgent results processed after a non-urgent result that became ready no earlier.");
        if (results.Any(r => !r.Measured))
        {
            output.WriteLine("  not run: the WhenAny loop's cost per result grows with n, so its CPU time and allocations are scaled by the");
            output.WriteLine("  square of the size from its largest measured run (--whenany-limit raises the limit).");
        }
    }

    private static string Ms(TimeSpan value) => Invariant($"{value.TotalMilliseconds:N1} ms");

    private static string Seconds(TimeSpan value) => Invariant($"{value.TotalSeconds:0.000} s");

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
