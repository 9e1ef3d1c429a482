using System.Collections.Generic;

namespace PriorityAsync.Inspector;

/// <summary>
/// Pairs one scheduler's <c>EscalationStarted</c> and <c>EscalationEnded</c> events into escalations, for the model and the Chrome
/// trace alike. The events name the work, not an identity: an end is paired with the oldest escalation in force of the same work and
/// own level (of the same raised level when there is one), and a start for work already raised to a lower level is that escalation
/// raised further (the library reports each further raise as a start).
/// </summary>
internal sealed class EscalationTracker
{
    private readonly List<Escalation> _inForce = [];

    /// <summary>The escalations in force, oldest first.</summary>
    public IReadOnlyList<Escalation> InForce => _inForce;

    public void Started(double atMs, string work, int fromLevel, int toLevel, string cause, string by)
    {
        int raised = _inForce.FindIndex(e => e.Work == work && e.FromLevel == fromLevel && e.ToLevel < toLevel);
        if (raised >= 0)
        {
            _inForce[raised] = _inForce[raised] with { ToLevel = toLevel, Cause = cause, By = by };
            return;
        }

        _inForce.Add(new Escalation(atMs, work, fromLevel, toLevel, cause, by));
    }

    /// <summary>The escalation that ended: the one in force it ends, or, raised before the session, one built from the end alone.</summary>
    public Escalation Ended(double atMs, string work, int fromLevel, int toLevel, double raisedForMs)
    {
        int index = _inForce.FindIndex(e => e.Work == work && e.FromLevel == fromLevel && e.ToLevel == toLevel);
        if (index < 0)
        {
            index = _inForce.FindIndex(e => e.Work == work && e.FromLevel == fromLevel);
        }

        double start = raisedForMs >= 0 ? atMs - raisedForMs : atMs;
        if (index < 0)
        {
            return new Escalation(start, work, fromLevel, toLevel, null, null, atMs);
        }

        Escalation ended = _inForce[index];
        _inForce.RemoveAt(index);
        return ended with { StartMs = raisedForMs >= 0 ? start : ended.StartMs, ToLevel = toLevel, EndMs = atMs };
    }

    /// <summary>The scheduler ended: nothing it ran is raised any longer.</summary>
    public void Clear() => _inForce.Clear();
}
