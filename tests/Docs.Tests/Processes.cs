using System.Diagnostics;

namespace Docs.Tests;

/// <summary>Runs a command line tool (dotnet, git) to its end, bounded; a non-zero exit fails with the tool's output.</summary>
internal static class Processes
{
    private static readonly TimeSpan s_limit = TimeSpan.FromMinutes(5);

    public static Task<string> RunAsync(string workingDirectory, string fileName, params string[] arguments)
        => RunAsync(workingDirectory, [], fileName, arguments);

    /// <summary>Runs the tool without the environment variables <paramref name="unset"/> (which the test host may have).</summary>
    public static Task<string> RunAsync(string workingDirectory, IReadOnlyList<string> unset, string fileName, params string[] arguments)
        => RunAsync(workingDirectory, unset.ToDictionary(name => name, _ => (string?)null), fileName, arguments);

    /// <summary>Runs the tool with the environment variables <paramref name="environment"/> set (a null value: removed).</summary>
    public static async Task<string> RunAsync(
        string workingDirectory, IReadOnlyDictionary<string, string?> environment, string fileName, params string[] arguments)
    {
        var start = new ProcessStartInfo(fileName)
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        // A pack here must not inherit the test host's MSBuild node settings.
        start.Environment["MSBUILDNOINPROCNODE"] = null;
        foreach ((string name, string? value) in environment)
        {
            if (value is null)
            {
                start.Environment.Remove(name);
            }
            else
            {
                start.Environment[name] = value;
            }
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";

        using Process process = Process.Start(start)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        using var limit = new CancellationTokenSource(s_limit);
        try
        {
            await process.WaitForExitAsync(limit.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"'{fileName} {string.Join(' ', arguments)}' did not finish within {s_limit.TotalMinutes} minutes.");
        }

        string text = await output + await error;
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"'{fileName} {string.Join(' ', arguments)}' in {workingDirectory} exited with {process.ExitCode}:\n{text}");
        }

        return text;
    }
}
