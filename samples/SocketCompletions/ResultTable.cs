using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using Samples.Support;

namespace SocketCompletions;

/// <summary>Prints the parent's table: one row per child and phase.</summary>
internal static class ResultTable
{
    public static void Write(TextWriter writer, IReadOnlyList<PhaseResult> results, Arguments options)
    {
        writer.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"Socket completions reaching a priority loop: {options.Requests} request/reply round trips per phase on 127.0.0.1, the server replying {LoopbackServer.ReplyDelay.TotalMilliseconds} ms after each request from its own thread."));
        writer.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"Lateness: from the server's send to the awaiting method resuming on the loop, over pending receives. {Environment.ProcessorCount} cores; load average {Machine.LoadAverage() ?? "n/a"}."));
        writer.WriteLine();
        string header = $"{"setting",-10}  {"starvation",-10}  {"phase",-8}  {"replies",7}  {"pending",7}  {"off loop",8}  {"while starved",13}  {"p50",9}  {"p90",9}  {"p99",9}  {"max",9}  {"pool threads",12}  {"starved for",11}";
        writer.WriteLine(header);
        writer.WriteLine(new string('-', header.Length));
        foreach (PhaseResult r in results)
        {
            string during = r.DuringStarvation < 0 ? "n/a" : $"{r.DuringStarvation} of {r.Pending}";
            string starvedFor = r.Phase == "healthy" ? "-" : string.Create(CultureInfo.InvariantCulture, $"{r.StarvedSeconds:0.00} s");
            writer.WriteLine(string.Create(
                CultureInfo.InvariantCulture,
                $"{(r.Inline ? "inline" : "default"),-10}  {r.Scenario,-10}  {r.Phase,-8}  {r.Replies,7}  {r.Pending,7}  {r.OffLoop,8}  {during,13}  {Ms(r.P50),9}  {Ms(r.P90),9}  {Ms(r.P99),9}  {Ms(r.Max),9}  {r.PoolThreads,12}  {starvedFor,11}"));
        }

        writer.WriteLine();
        writer.WriteLine("default: DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS unset (completions run on the thread pool); inline: set to 1 (on the socket engine's thread).");
        writer.WriteLine("blocked: every pool thread blocked forever before the phase (the pool recovers only by injecting threads); flood: blocking items queued ahead of everything, every pool thread (injected ones too) blocked until released.");
    }

    private static string Ms(double value) => double.IsNaN(value) ? "-" : string.Create(CultureInfo.InvariantCulture, $"{value:0.000} ms");
}
