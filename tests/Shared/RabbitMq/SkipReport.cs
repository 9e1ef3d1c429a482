using System.IO;

namespace TestSupport.RabbitMq;

/// <summary>
/// Writes each distinct reason a test was skipped for to <c>skipped-tests.txt</c> beside the test assembly, which the build prints
/// after <c>dotnet test</c> (Directory.Build.targets, ReportSkippedTests): the runner counts skipped tests but never says why.
/// </summary>
internal static class SkipReport
{
    private static readonly Lock s_gate = new();
    private static readonly HashSet<string> s_reasons = [];

    public static string Record(string reason)
    {
        lock (s_gate)
        {
            // Attributes are created at discovery and again to run: one line per reason, whoever asks.
            if (s_reasons.Add(reason))
            {
                File.AppendAllText(Path.Combine(AppContext.BaseDirectory, "skipped-tests.txt"), reason + Environment.NewLine);
            }
        }

        return reason;
    }
}
