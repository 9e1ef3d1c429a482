namespace Results;

/// <summary>The ways of processing the results, side by side.</summary>
public enum Variant
{
    /// <summary>Await each call in the order they were made, process its result.</summary>
    OneByOne,

    /// <summary><c>await Task.WhenAll(calls)</c>, then process every result.</summary>
    WhenAll,

    /// <summary>The "process tasks as they complete" loop: <c>Task.WhenAny</c> over the calls left, remove the one that completed, process it.</summary>
    WhenAnyLoop,

    /// <summary>The seed's best: each call packed with its own processing, <c>Task.WhenAll</c> over the packs, on the thread pool.</summary>
    Packed,

    /// <summary>PriorityAsync: each call's continuation processes its result at its level, on one thread.</summary>
    Priority,
}
