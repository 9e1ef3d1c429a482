using Xunit.Sdk;

namespace MessageBus.Postgres.Tests;

/// <summary>
/// A test that restarts the throwaway server of <c>tests/postgres/start.sh</c>, found through <c>PRIORITYASYNC_POSTGRES_DATA</c>.
/// Skipped without it (a server the tests did not start is never restarted), except with <c>CI=true</c>, where it fails.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
[XunitTestCaseDiscoverer("MessageBus.Postgres.Tests.LeftOutWhenSkippedDiscoverer", "MessageBus.Postgres.Tests")]
public sealed class PostgresRestartFactAttribute : FactAttribute
{
    public const string DataVariable = "PRIORITYASYNC_POSTGRES_DATA";

    public PostgresRestartFactAttribute()
    {
        if (TestDatabase.IsCi)
        {
            return;
        }

        if (TestDatabase.Unavailable() is { } reason)
        {
            Skip = $"{reason.TrimEnd('.')}: eval \"$(tests/postgres/start.sh)\"";
        }
        else if (string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(DataVariable)))
        {
            Skip = $"the restart test: {DataVariable} is not set (only a cluster of tests/postgres/start.sh is restarted).";
        }
    }
}
