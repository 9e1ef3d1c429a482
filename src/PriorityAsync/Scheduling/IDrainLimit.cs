namespace PriorityAsync.Internal;

/// <summary>
/// What may stop a <see cref="PriorityContext"/>'s drain between two items: nothing for its own loop, a host's budget and end request
/// for a drain its host calls ([H-BUDGET], [E-LIFE]). The drain is generic over it and only ever instantiated with structs, so the loop's
/// copy has no limit code at all, as with <see cref="IDispatchPolicy"/>. The draining thread only.
/// </summary>
internal interface IDrainLimit
{
    /// <summary>Before each item: the levels the next item may come from (all: <c>~0UL</c>; none: 0, and the drain stops).</summary>
    ulong AllowedLevels();

    /// <summary>An item was dequeued and is about to run.</summary>
    void OnItemStarted();
}
