// How socket completions reach a priority loop when the thread pool starves, with and without inline completions.
//
// On Linux a socket operation that cannot complete at once is finished by the socket engine: one thread per engine waits on
// epoll and, by default, hands the completion to the thread pool, which runs it and only then posts the awaiting method's
// continuation to its SynchronizationContext (here, the loop). With DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 the engine's
// thread finishes the operation itself and posts straight to the loop. The variable is read once, when the process starts, so
// each setting runs in its own child process: this program starts itself four times (two settings x two ways of starving the
// pool) and prints one table.
//
//   dotnet run --project samples/SocketCompletions -c Release [-- --requests 200] [--starve 3s]
//
// Everything stays on 127.0.0.1 and every count is bounded; each child ends within a minute or fails loudly.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Text.Json;
using Samples.Support;
using SocketCompletions;

const string InlineVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

if (SampleCommandLine.Exit("SocketCompletions", Arguments.TryParse(args, out Arguments options, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

if (options.ChildScenario is { } scenario)
{
    // The child: measure, print one JSON line per phase for the parent.
    foreach (PhaseResult result in Probe.Run(scenario, options.Requests, options.StarveFor))
    {
        Console.WriteLine(JsonSerializer.Serialize(result));
    }

    return 0;
}

// The parent: one child per setting and scenario.
string dll = Path.Combine(AppContext.BaseDirectory, "SocketCompletions.dll");
var results = new List<PhaseResult>();
foreach (bool inline in new[] { false, true })
{
    foreach (string childScenario in new[] { "blocked", "flood" })
    {
        Console.Error.WriteLine($"  child: {(inline ? InlineVariable + "=1" : "default")}, {childScenario}");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(dll);
        start.ArgumentList.Add("--child");
        start.ArgumentList.Add(childScenario);
        start.ArgumentList.Add("--requests");
        start.ArgumentList.Add(options.Requests.ToString(CultureInfo.InvariantCulture));
        start.ArgumentList.Add("--starve");
        start.ArgumentList.Add(options.StarveFor.TotalMilliseconds.ToString(CultureInfo.InvariantCulture) + "ms");
        if (inline)
        {
            start.Environment[InlineVariable] = "1";
        }
        else
        {
            start.Environment.Remove(InlineVariable);
        }

        using Process child = Process.Start(start)!;
        string output = child.StandardOutput.ReadToEnd();
        if (!child.WaitForExit(TimeSpan.FromMinutes(2)) || child.ExitCode != 0)
        {
            Console.Error.WriteLine($"SocketCompletions: the child ({childScenario}, inline={inline}) failed with exit code {(child.HasExited ? child.ExitCode : -1)}.");
            return 1;
        }

        foreach (string line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            results.Add(JsonSerializer.Deserialize<PhaseResult>(line)!);
        }
    }
}

ResultTable.Write(Console.Out, results, options);
return 0;
