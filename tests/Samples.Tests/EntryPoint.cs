using System.IO;
using System.Reflection;

namespace Samples.Tests;

/// <summary>Runs a sample's real entry point (the top-level statements of its Program.cs) in-process, with Console redirected.</summary>
internal static class EntryPoint
{
    public static (int ExitCode, string Stdout, string Stderr) Run(Assembly sample, params string[] args)
    {
        MethodInfo entry = sample.EntryPoint!;
        TextWriter previousOut = Console.Out;
        TextWriter previousError = Console.Error;
        var stdout = new StringWriter();
        var stderr = new StringWriter();
        Console.SetOut(stdout);
        Console.SetError(stderr);
        try
        {
            object? exit = entry.Invoke(null, [args]);
            return ((int)exit!, stdout.ToString(), stderr.ToString());
        }
        finally
        {
            Console.SetOut(previousOut);
            Console.SetError(previousError);
        }
    }
}
