using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>Runs this program again, with the same arguments, in a process whose JIT settings make in-process figures repeatable.</summary>
internal static class Reexec
{
    /// <summary>Starts this program again with <c>DOTNET_ReadyToRun=0</c> and <c>DOTNET_TC_CallCountingDelayMs=0</c>, waits for it,
    /// and returns its exit code.</summary>
    public static int WithStableJit(string[] args)
    {
        ProcessStartInfo start = ThisProgram(args);
        string host = start.FileName;
        start.Environment["DOTNET_ReadyToRun"] = "0";
        start.Environment["DOTNET_TC_CallCountingDelayMs"] = "0";
        Console.WriteLine("(--quick: running again with DOTNET_ReadyToRun=0 and DOTNET_TC_CallCountingDelayMs=0, for repeatable in-process figures; --no-reexec to skip)");
        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {host}.");
        process.WaitForExit();
        return process.ExitCode;
    }

    /// <summary>How to start this program again with <paramref name="args"/> (as "dotnet PriorityAsync.Benchmarks.dll" when it was started
    /// so).</summary>
    public static ProcessStartInfo ThisProgram(IEnumerable<string> args)
    {
        string host = Environment.ProcessPath ?? throw new InvalidOperationException("The path of this process is unknown.");
        var start = new ProcessStartInfo(host) { UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(host).Equals("dotnet", StringComparison.OrdinalIgnoreCase))
        {
            start.ArgumentList.Add(typeof(Reexec).Assembly.Location);
        }

        foreach (string argument in args)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }
}
