namespace MessageBus.Postgres.Tests;

/// <summary>
/// A test that restarts the throwaway server of <c>tests/postgres/start.sh</c>, found through <c>PRIORITYASYNC_POSTGRES_DATA</c>.
/// Skipped without it (a server the tests did not start is never restarted), except with <c>CI=true</c>, where it fails.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
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
            Skip = SkipReport.Record($"(no PostgreSQL: {reason}) {PostgresFactAttribute.HowToStart}");
        }
        else if (string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(DataVariable)))
        {
            Skip = SkipReport.Record(
                $"(the PostgreSQL restart test: {DataVariable} is not set) Only a cluster started by tests/postgres/start.sh is restarted: start one with eval \"$(tests/postgres/start.sh)\".");
        }
    }
}
