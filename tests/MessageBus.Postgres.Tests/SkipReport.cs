using System.IO;

namespace MessageBus.Postgres.Tests;

/// <summary>
/// Writes each distinct reason a test of this assembly was skipped for to <c>skipped-tests.txt</c> beside it, which the build
/// prints after <c>dotnet test</c> (Directory.Build.targets, ReportSkippedTests): the runner's default output counts skipped tests
/// but never says why. Each test is still reported Skipped, with its reason, by every runner.
/// </summary>
internal static class SkipReport
{
    public const string FileName = "skipped-tests.txt";

    private static readonly Lock s_gate = new();
    private static readonly HashSet<string> s_reasons = [];

    /// <summary>Returns <paramref name="reason"/>, for <c>Skip = SkipReport.Record(...)</c>, after writing it down once.</summary>
    public static string Record(string reason)
    {
        lock (s_gate)
        {
            // Attributes are created at discovery and again to run: one line per reason, whoever asks.
            if (s_reasons.Add(reason))
            {
                File.AppendAllText(Path.Combine(AppContext.BaseDirectory, FileName), reason + Environment.NewLine);
            }
        }

        return reason;
    }
}
