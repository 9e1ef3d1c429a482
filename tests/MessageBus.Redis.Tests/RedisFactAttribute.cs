namespace MessageBus.Redis.Tests;

/// <summary>
/// A test against the real Redis named by <c>PRIORITYASYNC_REDIS</c>. Without a server it is skipped with the reason, except when
/// <c>CI=true</c>: there a missing or unreachable server fails every such test (CI starts one; not finding it is a defect).
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class RedisFactAttribute : FactAttribute
{
    public const string HowToStart =
        "Start one for this shell, then run the tests again: eval \"$(tests/redis/start.sh)\" (tests/redis/stop.sh removes it; " +
        "see samples/MessageBus.Redis/README.md). With CI=true these tests fail instead.";

    public RedisFactAttribute()
    {
        if (!TestServer.IsCi && TestServer.Unavailable() is { } reason)
        {
            Skip = SkipReport.Record($"(no Redis: {reason}) {HowToStart}");
        }
    }
}

/// <summary>
/// A test that crashes and restarts the throwaway server of <c>tests/redis/start.sh</c>, found through <c>PRIORITYASYNC_REDIS_DATA</c>.
/// Skipped without it (a server the tests did not start is never killed), except with <c>CI=true</c>, where it fails.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class RedisRestartFactAttribute : FactAttribute
{
    public RedisRestartFactAttribute()
    {
        if (TestServer.IsCi)
        {
            return;
        }

        if (TestServer.Unavailable() is { } reason)
        {
            Skip = SkipReport.Record($"(no Redis: {reason}) {RedisFactAttribute.HowToStart}");
        }
        else if (string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(TestServer.DataVariable)))
        {
            Skip = SkipReport.Record(
                $"(the Redis restart test: {TestServer.DataVariable} is not set) Only a server started by tests/redis/start.sh is restarted: start one with eval \"$(tests/redis/start.sh)\".");
        }
    }
}
