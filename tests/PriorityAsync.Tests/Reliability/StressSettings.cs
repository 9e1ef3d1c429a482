using System.Globalization;

namespace PriorityAsync.Tests.Reliability;

/// <summary>
/// How long stress tests run. CI sets <c>PRIORITYASYNC_STRESS_SECONDS=20</c> (.ci/run); unset, a developer's <c>dotnet test</c>
/// gets a short run: every stress test still runs, with every check it makes in CI, for a few seconds each. The long run is
/// documented in docs/reliability.md.
/// </summary>
public static class StressSettings
{
    public const string EnvironmentVariable = "PRIORITYASYNC_STRESS_SECONDS";

    /// <summary>The default when the variable is unset: short enough for a developer's <c>dotnet test</c> (the stress tests run one
    /// at a time, so their budgets add up; at 10 s they took 80 of the suite's seconds, at 3 s about a third of that).</summary>
    public const int DefaultSeconds = 3;

    /// <summary>The budget in seconds of one stress test (each stress test takes at most about this long, most of them less).</summary>
    public static int Seconds { get; } = Parse(Environment.GetEnvironmentVariable(EnvironmentVariable));

    public static TimeSpan Duration => TimeSpan.FromSeconds(Seconds);

    /// <summary>A fraction of the budget, never below <paramref name="minimumSeconds"/>.</summary>
    public static TimeSpan Fraction(double fraction, double minimumSeconds = 1) =>
        TimeSpan.FromSeconds(Math.Max(minimumSeconds, Seconds * fraction));

    /// <summary>Waits for <paramref name="task"/> for the whole stress budget plus the usual unexpected-timeout, then fails loudly:
    /// for waits that legitimately last as long as the budget (a long run does proportionally more work).</summary>
    public static async Task WithinBudget(this Task task, string what)
    {
        TimeSpan limit = Duration + Infrastructure.TestTimeout.Unexpected;
        if (await Task.WhenAny(task, Task.Delay(limit)).ConfigureAwait(false) != task)
        {
            throw new TimeoutException($"Timed out after {limit.TotalSeconds} s (the stress budget plus {Infrastructure.TestTimeout.Unexpected.TotalSeconds} s) waiting for: {what} (a deadlock or a lost item).");
        }

        await task.ConfigureAwait(false);
    }

    /// <summary>
    /// Waits for <paramref name="task"/>, a fixed amount of work, for as long as it makes progress: fails loudly once
    /// <paramref name="progress"/> (a count that grows as items run, such as the scheduler's dispatch count) has not moved for the
    /// usual unexpected-timeout. A lost item or a deadlock stops the count; a busy machine only slows it, so unlike a bound on the
    /// whole run (<see cref="WithinBudget"/>) this holds at any load.
    /// </summary>
    public static async Task WhileProgressing(this Task task, Func<long> progress, string what)
    {
        long last = progress();
        DateTime lastMoved = DateTime.UtcNow;
        while (await Task.WhenAny(task, Task.Delay(TimeSpan.FromMilliseconds(100))).ConfigureAwait(false) != task)
        {
            long now = progress();
            if (now != last)
            {
                (last, lastMoved) = (now, DateTime.UtcNow);
            }
            else if (DateTime.UtcNow - lastMoved > Infrastructure.TestTimeout.Unexpected)
            {
                throw new TimeoutException($"No progress for {Infrastructure.TestTimeout.Unexpected.TotalSeconds} s (stuck at {now:N0}) waiting for: {what} (a deadlock or a lost item).");
            }
        }

        await task.ConfigureAwait(false);
    }

    private static int Parse(string? value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return DefaultSeconds;
        }

        if (!int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out int seconds) || seconds < 1)
        {
            throw new InvalidOperationException($"{EnvironmentVariable} must be a positive whole number of seconds, not '{value}'.");
        }

        return seconds;
    }
}

/// <summary>
/// Stress tests run one at a time, after the parallel tests, so they do not starve each other (or the rest of the suite) on a
/// 2-core machine and their throughput figures mean something.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class StressCollection
{
    public const string Name = "Stress";
}
