using System;

namespace SyncOverAsync;

/// <summary>What to run. Defaults are the README's run: the seed's experiment (60 s, a request every 2 ms, 900 ms calls) scaled
/// to 3 s with 100 ms calls.</summary>
internal sealed record Settings
{
    public bool Pool { get; init; } = true;

    public bool Loop { get; init; } = true;

    public bool Exceptions { get; init; } = true;

    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(3);

    public TimeSpan Interval { get; init; } = TimeSpan.FromMilliseconds(2);

    public TimeSpan Latency { get; init; } = TimeSpan.FromMilliseconds(100);

    public TimeSpan StallTimeout { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Returns a one-line description of the first invalid setting, or null.</summary>
    public string? Validate()
    {
        if (Duration <= TimeSpan.Zero || Duration > TimeSpan.FromMinutes(10))
        {
            return $"--duration must be more than 0 and at most 600s (got {Duration.TotalMilliseconds} ms).";
        }

        if (Interval < TimeSpan.FromMilliseconds(1) || Interval > Duration)
        {
            return $"--interval must be between 1ms and --duration (got {Interval.TotalMilliseconds} ms).";
        }

        if (Latency < TimeSpan.Zero || Latency > TimeSpan.FromSeconds(10))
        {
            return $"--latency must be between 0 and 10s (got {Latency.TotalMilliseconds} ms).";
        }

        return StallTimeout < TimeSpan.FromMilliseconds(10) || StallTimeout > TimeSpan.FromSeconds(60)
            ? $"--stall-timeout must be between 10ms and 60s (got {StallTimeout.TotalMilliseconds} ms)."
            : null;
    }
}
