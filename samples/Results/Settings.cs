using System;
using System.Collections.Generic;

namespace Results;

/// <summary>What to run. Defaults are the README's run.</summary>
internal sealed record Settings
{
    /// <summary>The numbers of calls to run (1 to <see cref="MaxCalls"/>, checked where --sizes is parsed), each a separate run of every variant.</summary>
    public IReadOnlyList<int> Sizes { get; init; } = [10, 1_000, 10_000, 100_000];

    /// <summary>The variants to run; by default every one, in the order <see cref="Variant"/> declares them.</summary>
    public IReadOnlyList<Variant> Variants { get; init; } = Enum.GetValues<Variant>();

    /// <summary>The time over which the responses arrive, in batches (see <see cref="Workload"/>).</summary>
    public TimeSpan Window { get; init; } = TimeSpan.FromMilliseconds(200);

    /// <summary>The CPU work of processing one result.</summary>
    public TimeSpan Work { get; init; } = TimeSpan.FromMicroseconds(10);

    /// <summary>One call in this many (on average) is urgent.</summary>
    public int UrgentEvery { get; init; } = 5;

    /// <summary>The WhenAny loop is O(n^2): above this many calls it is not run, and its cost is extrapolated.</summary>
    public int WhenAnyLimit { get; init; } = 10_000;

    public const int MaxCalls = 1_000_000;

    /// <summary>Returns a one-line description of the first invalid setting, or null.</summary>
    public string? Validate()
    {
        if (Window < TimeSpan.Zero || Window > TimeSpan.FromMinutes(1))
        {
            return $"--window must be between 0 and 60s (got {Window.TotalMilliseconds} ms).";
        }

        if (Work < TimeSpan.Zero || Work > TimeSpan.FromMilliseconds(100))
        {
            return $"--work must be between 0 and 100ms (got {Work.TotalMilliseconds} ms).";
        }

        if (UrgentEvery is < 1 or > 1_000)
        {
            return $"--urgent-every must be between 1 and 1000 (got {UrgentEvery}).";
        }

        return WhenAnyLimit is < 1 or > MaxCalls ? $"--whenany-limit must be between 1 and {MaxCalls:N0} (got {WhenAnyLimit})." : null;
    }
}
