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
/// A test that starts a throwaway node of its own with <c>tests/rabbitmq/start.sh</c> and breaks it (kills it, closes its
/// connections). Skipped where no node of that script runs (<c>PRIORITYASYNC_RABBITMQ_DATA</c> unset: the script may not work
/// here), except with <c>CI=true</c>, where it fails.
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
                $"(the RabbitMQ fault tests: {TestBroker.DataVariable} is not set) They start nodes of their own with tests/rabbitmq/start.sh; run them where it works: eval \"$(tests/rabbitmq/start.sh)\".");
        }
    }
}
