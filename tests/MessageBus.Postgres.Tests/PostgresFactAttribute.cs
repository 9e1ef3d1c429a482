using Xunit.Sdk;

namespace MessageBus.Postgres.Tests;

/// <summary>
/// A test against the real PostgreSQL named by <c>PRIORITYASYNC_POSTGRES</c>. Without a server it is skipped with the reason, except
/// when <c>CI=true</c>: there a missing or unreachable server fails every such test (CI starts one; not finding it is a defect).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
[XunitTestCaseDiscoverer("MessageBus.Postgres.Tests.LeftOutWhenSkippedDiscoverer", "MessageBus.Postgres.Tests")]
public sealed class PostgresFactAttribute : FactAttribute
{
    public PostgresFactAttribute()
    {
        if (!TestDatabase.IsCi && TestDatabase.Unavailable() is { } reason)
        {
            // One line of the test run's output says it for all of them (SkipReport); CONTRIBUTING.md says more.
            Skip = $"{reason.TrimEnd('.')}: eval \"$(tests/postgres/start.sh)\"";
        }
    }
}
