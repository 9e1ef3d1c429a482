namespace PriorityAsync.Inspector;

/// <summary>How the session asks the target for events.</summary>
/// <param name="SamplePeriodMs">The target's sampler period (10 to 1000 ms).</param>
/// <param name="AllItemsBelow">Items per second under which every item of a scheduler is observed (0: one sample per period always).</param>
/// <param name="RecordPath">Where to keep the raw event stream (a .nettrace file), or null.</param>
/// <param name="EveryItem">Also ask for the per-item start and stop events (keyword <c>Items</c>): exact and costly.</param>
internal sealed record SessionOptions(int SamplePeriodMs = 50, int AllItemsBelow = 20_000, string? RecordPath = null, bool EveryItem = false);
