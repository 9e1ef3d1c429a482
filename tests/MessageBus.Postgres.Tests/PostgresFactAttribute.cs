namespace MessageBus.Postgres.Tests;

/// <summary>
/// A test against the real PostgreSQL named by <c>PRIORITYASYNC_POSTGRES</c>. Without a server it is skipped with the reason, except
/// when <c>CI=true</c>: there a missing or unreachable server fails every such test (CI starts one; not finding it is a defect).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class PostgresFactAttribute : FactAttribute
{
    public const string HowToStart =
        "Start one for this shell, then run the tests again: eval \"$(tests/postgres/start.sh)\" (tests/postgres/stop.sh removes it; " +
        "see CONTRIBUTING.md). With CI=true these tests fail instead.";

    public PostgresFactAttribute()
    {
        if (!TestDatabase.IsCi && TestDatabase.Unavailable() is { } reason)
        {
            Skip = SkipReport.Record($"(no PostgreSQL: {reason}) {HowToStart}");
        }
    }
}
