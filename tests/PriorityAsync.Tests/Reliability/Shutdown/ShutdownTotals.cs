using System.Text;

namespace PriorityAsync.Tests.Reliability.Shutdown;

/// <summary>What the shutdown rounds of one run did, summed: the figures docs/reliability.md quotes. One round adds at a time.</summary>
public sealed class ShutdownTotals
{
    private readonly Dictionary<string, long> _counts = [];

    public int Rounds { get; private set; }

    public int FailedRounds { get; private set; }

    /// <summary>Every operation a producer made (each post, send, invocation, task, child, controller item and hop).</summary>
    public long Items { get; private set; }

    public Dictionary<EndKind, int> RoundsPerEnd { get; } = [];

    public long this[string name] => _counts.GetValueOrDefault(name);

    public void AddRound(EndKind end, bool failed)
    {
        Rounds++;
        FailedRounds += failed ? 1 : 0;
        RoundsPerEnd[end] = RoundsPerEnd.GetValueOrDefault(end) + 1;
    }

    public void AddItems(long items) => Items += items;

    public void Count(string name, long count = 1) => _counts[name] = _counts.GetValueOrDefault(name) + count;

    public override string ToString()
    {
        var text = new StringBuilder();
        text.Append($"{Rounds:N0} rounds ({string.Join(", ", RoundsPerEnd.OrderBy(p => p.Key).Select(p => $"{p.Key} {p.Value:N0}"))}), ");
        text.Append($"{Items:N0} items, {FailedRounds:N0} failed rounds; ");
        text.Append(string.Join(", ", _counts.OrderBy(p => p.Key, StringComparer.Ordinal).Select(p => $"{p.Key} {p.Value:N0}")));
        return text.ToString();
    }
}
