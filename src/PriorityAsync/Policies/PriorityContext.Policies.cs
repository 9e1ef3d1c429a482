using System;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The dispatch policy (PriorityPolicy): which queued item runs next. The loop (DrainReady<TPolicy> in Context/PriorityContext.cs) is one
// generic method, instantiated with a struct per policy, so each policy gets its own compiled copy with its calls inlined: the
// strict copy is the loop as it was before policies existed, and the choice between copies is one branch per drain, not per item.
//
// Invariants: S1 in Policies/StrictPriorityPolicy.cs, A1 in Policies/AgingDispatch.cs, W1 and W2 in Policies/WeightedSharesDispatch.cs.
// Every policy takes only the head of a level, so FIFO within a level and "run or dropped exactly once" (the protocols at the top of
// Context/PriorityContext.cs) hold under each of them unchanged.
public sealed partial class PriorityContext
{
    private PriorityPolicy _priorityPolicy = PriorityPolicy.Strict;
    private PolicyKind _policyKind;
    private AgingDispatch? _aging;
    private WeightedSharesDispatch? _shares;

    // SlowPaths.WaitTime while the aging policy is in force, else 0: Enqueue stamps every item then (the policy reads the stamps),
    // without turning on the observed slow path of the loop.
    private int _stampAlways;

    /// <summary>Gets the policy that chooses between levels, as given in <see cref="PriorityContextOptions.Policy"/>.</summary>
    public PriorityPolicy Policy => _priorityPolicy;

    /// <summary>Gets the current shares of <paramref name="level"/> under <see cref="PriorityPolicy.WeightedShares(int[])"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>The shares, from <see cref="PriorityPolicy.MinShares"/> to <see cref="PriorityPolicy.MaxShares"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <exception cref="InvalidOperationException">The context's policy is not weighted shares.</exception>
    public int GetShares(int level) => SharesPolicy(nameof(GetShares)).GetShares(ValidateLevel(level));

    /// <summary>Changes the shares of <paramref name="level"/> under <see cref="PriorityPolicy.WeightedShares(int[])"/>, from any thread,
    /// while the context runs. Run time charged from then on is weighed with the new shares.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <param name="shares">The new shares, from <see cref="PriorityPolicy.MinShares"/> (1) to <see cref="PriorityPolicy.MaxShares"/> (10,000).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels, or
    /// <paramref name="shares"/> is outside 1 to 10,000.</exception>
    /// <exception cref="InvalidOperationException">The context's policy is not weighted shares.</exception>
    public void SetShares(int level, int shares)
    {
        WeightedSharesDispatch policy = SharesPolicy(nameof(SetShares));
        PriorityPolicy.CheckShares(shares, ValidateLevel(level), nameof(shares));
        policy.SetShares(level, shares);
    }

    /// <summary>For tests: the weighted-shares state, or null.</summary>
    internal WeightedSharesDispatch? SharesDispatch => _shares;

    /// <summary>For tests: the aging state, or null.</summary>
    internal AgingDispatch? AgingDispatch => _aging;

    /// <summary>The enqueue stamp of an item queued by the loop itself outside <see cref="Enqueue"/> (timer firings): the clock under
    /// the aging policy, else 0.</summary>
    internal long PolicyStamp() => _stampAlways != 0 ? Timestamp() : 0;

    private void InitializePolicy(PriorityPolicy policy)
    {
        _priorityPolicy = policy;
        _policyKind = policy.Kind;
        switch (policy)
        {
            case AgingPriorityPolicy aging:
                _aging = new AgingDispatch(aging, _clock);
                _stampAlways = SlowPaths.WaitTime;
                break;
            case WeightedSharesPriorityPolicy shares:
                _shares = new WeightedSharesDispatch(shares, _clock);
                break;
        }
    }

    private WeightedSharesDispatch SharesPolicy(string operation) =>
        _shares ?? throw new InvalidOperationException(
            $"{operation} needs the weighted-shares policy, and the PriorityContext '{Name}' runs {_priorityPolicy}. " +
            "Create the context with PriorityContextOptions.Policy = PriorityPolicy.WeightedShares(...).");

    /// <summary>Runs items until none is ready or the context faults, with the context's policy.</summary>
    private void DrainReady()
    {
        switch (_policyKind)
        {
            case PolicyKind.Aging:
                DrainReady(new AgingDispatch.Loop(_aging!));
                break;
            case PolicyKind.WeightedShares:
                DrainReady(new WeightedSharesDispatch.Loop(_shares!));
                break;
            default:
                DrainReady(default(StrictPriorityPolicy));
                break;
        }
    }
}
