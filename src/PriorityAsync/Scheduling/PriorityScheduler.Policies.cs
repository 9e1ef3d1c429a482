using System;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The dispatch policy: which queued item runs next ([S-STRICT], [A-AGING], [W-SHARES]). Each scheduler's dispatch is generic over a
// struct per policy, so each policy gets its own compiled copy with its calls inlined and no policy pays a per-item branch for another.
public abstract partial class PriorityScheduler
{
    private PolicyKind _policyKind;
    private AgingDispatch? _aging;
    private WeightedSharesDispatch? _shares;

    // SlowPaths.WaitTime while the aging policy is in force, else 0: Enqueue stamps every item then (the policy reads the stamps)
    // without turning on the observed slow path.
    private int _stampAlways;

    /// <summary>Gets the policy that chooses between levels, as given in <see cref="PrioritySchedulerOptions.Policy"/>.</summary>
    public PriorityPolicy Policy { get; private set; } = PriorityPolicy.Strict;

    /// <summary>For tests: the weighted-shares state, or null.</summary>
    internal WeightedSharesDispatch? SharesDispatch => _shares;

    /// <summary>For tests: the aging state, or null.</summary>
    internal AgingDispatch? AgingDispatch => _aging;

    private protected PolicyKind PolicyKind => _policyKind;

    /// <summary>Gets the current shares of <paramref name="level"/> under <see cref="PriorityPolicy.WeightedShares(int[])"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The shares, from <see cref="PriorityPolicy.MinShares"/> to <see cref="PriorityPolicy.MaxShares"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels.</exception>
    /// <exception cref="InvalidOperationException">The scheduler's policy is not weighted shares.</exception>
    public int GetShares(int level) => SharesPolicy(nameof(GetShares)).GetShares(ValidateLevel(level));

    /// <summary>Changes the shares of <paramref name="level"/> under <see cref="PriorityPolicy.WeightedShares(int[])"/>, from any thread,
    /// while the scheduler runs. Run time charged from then on is weighed with the new shares.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <param name="shares">The new shares, from <see cref="PriorityPolicy.MinShares"/> (1) to <see cref="PriorityPolicy.MaxShares"/> (10,000).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the scheduler's levels, or
    /// <paramref name="shares"/> is outside 1 to 10,000.</exception>
    /// <exception cref="InvalidOperationException">The scheduler's policy is not weighted shares.</exception>
    public void SetShares(int level, int shares)
    {
        WeightedSharesDispatch policy = SharesPolicy(nameof(SetShares));
        PriorityPolicy.CheckShares(shares, ValidateLevel(level), nameof(shares));
        policy.SetShares(level, shares);
    }

    private protected AgingDispatch.View AgingView => new(_aging!);

    private protected WeightedSharesDispatch.View SharesView => new(_shares!);

    private void InitializePolicy(PriorityPolicy policy, TimeProvider? clock)
    {
        Policy = policy;
        _policyKind = policy.Kind;
        switch (policy)
        {
            case AgingPriorityPolicy aging:
                _aging = new AgingDispatch(aging, clock);
                _stampAlways = SlowPaths.WaitTime;
                break;
            case WeightedSharesPriorityPolicy shares:
                _shares = new WeightedSharesDispatch(shares, clock);
                break;
        }
    }

    private WeightedSharesDispatch SharesPolicy(string operation) =>
        _shares ?? throw new InvalidOperationException(
            $"{operation} needs the weighted-shares policy, and {Subject} runs {Policy}. " +
            $"Create it with {Kind}Options.Policy = PriorityPolicy.WeightedShares(...).");
}
