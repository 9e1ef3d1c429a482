using FsCheck;
using FsCheck.Fluent;

namespace PriorityAsync.Tests.Policies;

/// <summary>Which policy a plan runs under, with its per-level values (microsecond bounds for aging, shares for weighted shares).</summary>
internal enum PolicyChoice
{
    Strict,
    Aging,
    Shares,
}

/// <summary>An item of a plan: runs for <paramref name="Duration"/> clock ticks (the manual clock is advanced by that much), then
/// optionally changes one level's shares, then posts its children.</summary>
internal sealed record PlanItem(int Level, int Duration, IReadOnlyList<PlanItem> Children, (int Level, int Shares)? SetShares)
{
    public override string ToString() =>
        $"L{Level}/{Duration}" + (SetShares is { } s ? $" set({s.Level}={s.Shares})" : string.Empty) +
        (Children.Count == 0 ? string.Empty : "[" + string.Join(" ", Children) + "]");
}

/// <summary>A top-level item, posted by the entry point <paramref name="Gap"/> ticks after the previous one.</summary>
internal sealed record TopItem(int Gap, PlanItem Item)
{
    public override string ToString() => $"+{Gap} {Item}";
}

internal sealed record PolicyPlan(PolicyChoice Policy, IReadOnlyList<int> Values, IReadOnlyList<TopItem> Items)
{
    public const int Levels = 3;

    public PriorityPolicy CreatePolicy() => Policy switch
    {
        PolicyChoice.Aging => PriorityPolicy.Aging(Values.Select(v => TimeSpan.FromMicroseconds(v)).ToArray()),
        PolicyChoice.Shares => PriorityPolicy.WeightedShares(Values.ToArray()),
        _ => PriorityPolicy.Strict,
    };

    public override string ToString() => $"{Policy}({string.Join(",", Values)}): {string.Join("; ", Items)}";

    private static Gen<int> Level => Gen.Choose(0, Levels - 1);

    private static Gen<PlanItem> ItemGen(int depth, bool shares) =>
        from level in Level
        from duration in Gen.Frequency((1, Gen.Constant(0)), (6, Gen.Choose(1, 20)))
        from children in depth > 0 ? Gen.Frequency((3, Gen.Constant(Array.Empty<PlanItem>())), (2, Gen.ArrayOf(ItemGen(depth - 1, shares), 1)), (1, Gen.ArrayOf(ItemGen(depth - 1, shares), 2))) : Gen.Constant(Array.Empty<PlanItem>())
        from set in shares ? Gen.Frequency((8, Gen.Constant<(int, int)?>(null)), (1, from l in Level from s in Gen.Choose(1, 8) select ((int, int)?)(l, s))) : Gen.Constant<(int, int)?>(null)
        select new PlanItem(level, duration, children, set);

    public static Gen<PolicyPlan> For(PolicyChoice policy) =>
        from values in Gen.ArrayOf(policy == PolicyChoice.Aging ? Gen.Choose(1, 60) : Gen.Choose(1, 8), Levels)
        from count in Gen.Choose(0, 30)
        from items in Gen.ArrayOf(from gap in Gen.Choose(0, 10) from item in ItemGen(2, policy == PolicyChoice.Shares) select new TopItem(gap, item), count)
        select new PolicyPlan(policy, values, items);

    public static Arbitrary<PolicyPlan> Arbitrary(PolicyChoice policy) => Arb.From(For(policy), Shrink);

    /// <summary>Shrinks by dropping one top-level item at a time, so a counterexample prints short.</summary>
    private static IEnumerable<PolicyPlan> Shrink(PolicyPlan plan) =>
        Enumerable.Range(0, plan.Items.Count).Select(skip => plan with { Items = plan.Items.Where((_, i) => i != skip).ToArray() });
}
