namespace PriorityAsync.Tests.Policies;

/// <summary>
/// The reference model of the three policies, run on a simulated clock: what the loop must run, in order, for a <see cref="PolicyPlan"/>.
/// Written from the rules, not from the implementation: levels that hold no item do not exist for it (no stale bits), and a level
/// that receives an item while empty is lifted to the floor at that moment.
/// <list type="bullet">
/// <item>Strict: the oldest item of the highest non-empty level.</item>
/// <item>Aging: among the heads whose deadline (enqueue time + the level's bound) is before now, the earliest deadline (ties to the
/// higher level); if none, strict.</item>
/// <item>Weighted shares: the head of the non-empty level with the least virtual run time (ties to the higher level); an item's run
/// time divided by its level's current shares is added to it after the item; a level receiving an item while empty starts at no less
/// than the floor, the largest virtual run time any dispatch has chosen.</item>
/// </list>
/// </summary>
internal sealed class PolicyReferenceModel
{
    private readonly PolicyPlan _plan;
    private readonly Queue<(string Id, PlanItem Item, long EnqueuedAt)>[] _queues;
    private readonly double[] _virtualRunTime = new double[PolicyPlan.Levels];
    private readonly int[] _shares = new int[PolicyPlan.Levels];
    private double _floor;
    private long _now = ManualClock.Start;

    public PolicyReferenceModel(PolicyPlan plan)
    {
        _plan = plan;
        _queues = Enumerable.Range(0, PolicyPlan.Levels).Select(_ => new Queue<(string, PlanItem, long)>()).ToArray();
        if (plan.Policy == PolicyChoice.Shares)
        {
            plan.Values.ToArray().CopyTo(_shares, 0);
        }
    }

    public List<string> Log { get; } = new();

    /// <summary>Runs the plan: the entry point (a level-0 item) posts the top-level items, then every item runs.</summary>
    public void Run()
    {
        // The entry point is the only item when the loop starts: chosen at virtual run time 0 (so the floor stays 0), then charged.
        long entryStart = _now;
        for (int i = 0; i < _plan.Items.Count; i++)
        {
            _now += _plan.Items[i].Gap;
            Post(i.ToString(System.Globalization.CultureInfo.InvariantCulture), _plan.Items[i].Item);
        }

        Charge(0, _now - entryStart);

        while (TryChoose(out int level))
        {
            (string id, PlanItem item, _) = _queues[level].Dequeue();
            Log.Add($"{id}@{level}");
            _now += item.Duration;
            if (item.SetShares is { } set)
            {
                _shares[set.Level] = set.Shares;
            }

            for (int j = 0; j < item.Children.Count; j++)
            {
                Post($"{id}/{j}", item.Children[j]);
            }

            Charge(level, item.Duration);
        }
    }

    private void Post(string id, PlanItem item)
    {
        if (_queues[item.Level].Count == 0)
        {
            _virtualRunTime[item.Level] = Math.Max(_virtualRunTime[item.Level], _floor);
        }

        _queues[item.Level].Enqueue((id, item, _now));
    }

    private void Charge(int level, long runTime)
    {
        if (_plan.Policy == PolicyChoice.Shares)
        {
            _virtualRunTime[level] += runTime / (double)_shares[level];
        }
    }

    private bool TryChoose(out int level)
    {
        level = -1;
        int highest = Enumerable.Range(0, PolicyPlan.Levels).Where(l => _queues[l].Count > 0).DefaultIfEmpty(-1).Max();
        if (highest < 0)
        {
            return false;
        }

        switch (_plan.Policy)
        {
            case PolicyChoice.Aging:
                long bestDeadline = long.MaxValue;
                for (int l = PolicyPlan.Levels - 1; l >= 0; l--)
                {
                    if (_queues[l].Count > 0)
                    {
                        long deadline = _queues[l].Peek().EnqueuedAt + _plan.Values[l]; // bounds in µs = ticks
                        if (deadline < _now && deadline < bestDeadline)
                        {
                            bestDeadline = deadline;
                            level = l;
                        }
                    }
                }

                level = level >= 0 ? level : highest;
                return true;
            case PolicyChoice.Shares:
                double least = double.PositiveInfinity;
                for (int l = PolicyPlan.Levels - 1; l >= 0; l--)
                {
                    if (_queues[l].Count > 0 && _virtualRunTime[l] < least)
                    {
                        least = _virtualRunTime[l];
                        level = l;
                    }
                }

                _floor = Math.Max(_floor, least);
                return true;
            default:
                level = highest;
                return true;
        }
    }
}
