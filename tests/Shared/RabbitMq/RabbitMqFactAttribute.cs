using System.IO;

namespace TestSupport.RabbitMq;

/// <summary>
/// A test against the real RabbitMQ named by <c>PRIORITYASYNC_RABBITMQ</c>. Without a node it is skipped with the reason, except when
/// <c>CI=true</c>: there a missing or unreachable node fails every such test (CI starts one; not finding it is a defect).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
internal sealed class RabbitMqFactAttribute : FactAttribute
{
    public RabbitMqFactAttribute()
    {
        if (!TestBroker.IsCi && TestBroker.Unavailable() is { } reason)
        {
            Skip = SkipReport.Record($"(no RabbitMQ: {reason}) {TestBroker.HowToStart}");
        }
    }
}

/// <summary>
/// A test that breaks the throwaway node of <c>tests/rabbitmq/start.sh</c> (kills it, closes its connections), found through
/// <c>PRIORITYASYNC_RABBITMQ_DATA</c>. Skipped without it (a node the tests did not start is never touched), except with <c>CI=true</c>.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
internal sealed class RabbitMqNodeFactAttribute : FactAttribute
{
    public RabbitMqNodeFactAttribute()
    {
        if (TestBroker.IsCi)
        {
            return;
        }

        if (TestBroker.Unavailable() is { } reason)
        {
            Skip = SkipReport.Record($"(no RabbitMQ: {reason}) {TestBroker.HowToStart}");
        }
        else if (string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(TestBroker.DataVariable)))
        {
            Skip = SkipReport.Record(
                $"(the RabbitMQ fault tests: {TestBroker.DataVariable} is not set) Only a node started by tests/rabbitmq/start.sh is broken: start one with eval \"$(tests/rabbitmq/start.sh)\".");
        }
    }
}

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
