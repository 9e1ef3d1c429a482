using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Linq;

namespace PriorityAsync;

/// <summary>
/// How a priority scheduler chooses the next queued item between levels; within a level items always run in the order
/// they were queued. Set it with <see cref="PrioritySchedulerOptions.Policy"/>.
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item><see cref="Strict"/> (the default): always the highest non-empty level. A level that never empties starves every level below it.</item>
/// <item><see cref="Aging(TimeSpan[])"/>: strict, except that an item that has waited longer than its level's maximum wait runs before
/// newer items of higher levels. Bounds every level's wait (React's expiration times, Avalonia's input-starvation timeout).</item>
/// <item><see cref="WeightedShares(int[])"/>: when several levels are backlogged, each receives run time in proportion to its shares,
/// measured in time spent running (Seastar's scheduling groups, Glommio's task-queue shares). Shares change at run time with
/// <see cref="PriorityScheduler.SetShares(int, int)"/>.</item>
/// </list>
/// A policy only decides between queued items: an <c>await Prioritize(level)</c> that completes at once is part of the running item.
/// What each policy costs and when to pick it: docs/concepts.md, "Policies".
/// </remarks>
public abstract class PriorityPolicy
{
    /// <summary>The smallest allowed number of shares of a level.</summary>
    public const int MinShares = 1;

    /// <summary>The largest allowed number of shares of a level.</summary>
    public const int MaxShares = 10_000;

    /// <summary>The largest allowed maximum wait of a level under <see cref="Aging(TimeSpan[])"/>: one day.</summary>
    public static readonly TimeSpan MaxAgingWait = TimeSpan.FromDays(1);

    private protected PriorityPolicy()
    {
    }

    /// <summary>Gets strict priority: always the oldest item of the highest non-empty level. The default.</summary>
    public static PriorityPolicy Strict { get; } = new StrictRule();

    internal abstract PolicyKind Kind { get; }

    /// <summary>Strict priority with a maximum wait per level: an item that has waited longer than its level's bound runs before newer
    /// items of higher levels (the expired items in the order their bounds ran out).</summary>
    /// <param name="maxWaitPerLevel">One bound per level, index 0 for level 0; each from just above zero to <see cref="MaxAgingWait"/>
    /// (one day). Its length must equal <see cref="PrioritySchedulerOptions.Levels"/> (checked when the scheduler is created).</param>
    /// <returns>The policy, for <see cref="PrioritySchedulerOptions.Policy"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="maxWaitPerLevel"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A bound is zero, negative or above one day, or there are no bounds or more than
    /// <see cref="PrioritySchedulerOptions.MaxLevels"/>.</exception>
    public static AgingPriorityPolicy Aging(params TimeSpan[] maxWaitPerLevel)
    {
        ArgumentNullException.ThrowIfNull(maxWaitPerLevel);
        CheckLength(maxWaitPerLevel.Length, nameof(maxWaitPerLevel));
        for (int level = 0; level < maxWaitPerLevel.Length; level++)
        {
            TimeSpan bound = maxWaitPerLevel[level];
            if (bound <= TimeSpan.Zero || bound > MaxAgingWait)
            {
                throw new ArgumentOutOfRangeException(
                    $"{nameof(maxWaitPerLevel)}[{level}]", bound, $"The maximum wait of level {level} must be above zero and at most {MaxAgingWait}.");
            }
        }

        return new AgingPriorityPolicy((TimeSpan[])maxWaitPerLevel.Clone());
    }

    /// <summary>Weighted shares of run time: when several levels are backlogged, each receives run time in proportion to its shares.</summary>
    /// <param name="sharesPerLevel">One share count per level, index 0 for level 0; each from <see cref="MinShares"/> (1) to
    /// <see cref="MaxShares"/> (10,000). Its length must equal <see cref="PrioritySchedulerOptions.Levels"/> (checked when the scheduler is
    /// created). The scheduler starts with these; <see cref="PriorityScheduler.SetShares(int, int)"/> changes them while it runs.</param>
    /// <returns>The policy, for <see cref="PrioritySchedulerOptions.Policy"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="sharesPerLevel"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A share count is outside 1 to 10,000, or there are no counts or more than
    /// <see cref="PrioritySchedulerOptions.MaxLevels"/>.</exception>
    public static WeightedSharesPriorityPolicy WeightedShares(params int[] sharesPerLevel)
    {
        ArgumentNullException.ThrowIfNull(sharesPerLevel);
        CheckLength(sharesPerLevel.Length, nameof(sharesPerLevel));
        for (int level = 0; level < sharesPerLevel.Length; level++)
        {
            CheckShares(sharesPerLevel[level], level, $"{nameof(sharesPerLevel)}[{level}]");
        }

        return new WeightedSharesPriorityPolicy((int[])sharesPerLevel.Clone());
    }

    internal static void CheckShares(int shares, int level, string paramName)
    {
        if (shares is < MinShares or > MaxShares)
        {
            throw new ArgumentOutOfRangeException(paramName, shares, $"The shares of level {level} must be between {MinShares} and {MaxShares}.");
        }
    }

    /// <summary>How many values per level the policy holds (0: none), and what they are, for the check against Levels.</summary>
    internal virtual (int Count, string What) PerLevelValues => (0, string.Empty);

    private static void CheckLength(int length, string paramName)
    {
        if (length is < PriorityContextOptions.MinLevels or > PriorityContextOptions.MaxLevels)
        {
            throw new ArgumentOutOfRangeException(
                paramName, length, $"Give one value per level: between {PriorityContextOptions.MinLevels} and {PriorityContextOptions.MaxLevels} values.");
        }
    }

    private sealed class StrictRule : PriorityPolicy
    {
        internal override PolicyKind Kind => PolicyKind.Strict;

        public override string ToString() => "Strict";
    }
}

/// <summary>Strict priority with a maximum wait per level. Create it with <see cref="PriorityPolicy.Aging(TimeSpan[])"/>.</summary>
/// <remarks>
/// <para>Guarantee: an item at the head of its level runs at most one item's run time after its bound ran out, plus the run time of
/// other expired items whose bounds ran out earlier. So under a top level that never empties, the lowest level's worst wait is its bound
/// plus one item's run time, as long as its own items do not arrive faster than they can run.</para>
/// <para>On a <see cref="PriorityThreadPool"/> the guarantee holds at every dequeue on any thread, among the levels below their cap.</para>
/// <para>Cost: every item is stamped with the clock when queued, and the dispatch reads the clock once per item while two or more
/// levels hold work.</para>
/// </remarks>
public sealed class AgingPriorityPolicy : PriorityPolicy
{
    internal AgingPriorityPolicy(TimeSpan[] maxWaitPerLevel) => MaxWaitPerLevel = new ReadOnlyCollection<TimeSpan>(maxWaitPerLevel);

    /// <summary>Gets the maximum wait of each level, index 0 for level 0.</summary>
    public IReadOnlyList<TimeSpan> MaxWaitPerLevel { get; }

    internal override PolicyKind Kind => PolicyKind.Aging;

    /// <summary>Describes the policy.</summary>
    /// <returns>For example "Aging(1000 ms, 50 ms, 50 ms)".</returns>
    public override string ToString() =>
        $"Aging({string.Join(", ", MaxWaitPerLevel.Select(w => w.TotalMilliseconds.ToString("0.###", System.Globalization.CultureInfo.InvariantCulture) + " ms"))})";

    internal override (int Count, string What) PerLevelValues => (MaxWaitPerLevel.Count, "maximum waits");
}

/// <summary>Weighted shares of run time per level. Create it with <see cref="PriorityPolicy.WeightedShares(int[])"/>.</summary>
/// <remarks>
/// <para>Guarantee: over any interval in which a set of levels stays backlogged, each receives run time in proportion to its shares,
/// to within about one item's run time per level. A level that was idle starts level with the others: it cannot bank run time while
/// idle. Shares are not priorities: a level with more shares runs more often, not first. On a <see cref="PriorityThreadPool"/> run
/// time is summed over the threads, and the bound widens to about one item's run time per thread per level.</para>
/// <para>Cost: a clock reading after every item (on a pool, one as each item is dequeued and one as it ends).</para>
/// </remarks>
public sealed class WeightedSharesPriorityPolicy : PriorityPolicy
{
    internal WeightedSharesPriorityPolicy(int[] sharesPerLevel) => SharesPerLevel = new ReadOnlyCollection<int>(sharesPerLevel);

    /// <summary>Gets the initial shares of each level, index 0 for level 0 (a scheduler's current shares: <see cref="PriorityScheduler.GetShares(int)"/>).</summary>
    public IReadOnlyList<int> SharesPerLevel { get; }

    internal override PolicyKind Kind => PolicyKind.WeightedShares;

    /// <summary>Describes the policy.</summary>
    /// <returns>For example "WeightedShares(1:2:4)".</returns>
    public override string ToString() => $"WeightedShares({string.Join(":", SharesPerLevel)})";

    internal override (int Count, string What) PerLevelValues => (SharesPerLevel.Count, "share counts");
}

/// <summary>Which dispatch copy a scheduler runs (one per policy struct).</summary>
internal enum PolicyKind
{
    Strict = 0,
    Aging = 1,
    WeightedShares = 2,
}
