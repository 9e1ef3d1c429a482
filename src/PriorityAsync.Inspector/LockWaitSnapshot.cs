namespace PriorityAsync.Inspector;

/// <summary>A long lock wait (<c>LockWaitLong</c>): code at <paramref name="Level"/> had waited <paramref name="WaitedMs"/> for the lock
/// when its scheduler's stall timeout passed, held by <paramref name="Holders"/>, who were raised (<paramref name="HolderRaised"/>) or
/// could not be (off the scheduler).</summary>
internal sealed record LockWaitSnapshot(double AtSeconds, string Lock, int Level, double WaitedMs, string Holders, bool HolderRaised);
