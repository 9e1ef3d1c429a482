namespace PriorityAsync.Tests.Policies;

/// <summary>An injected clock that moves only when told (<see cref="Advance"/>): reading it changes nothing. 1 tick = 1 µs.</summary>
public sealed class ManualClock : TimeProvider
{
    public const long Start = 1_000_000; // never 0: the library reads an enqueue time of 0 as "not stamped"

    private long _now = Start;

    public override long TimestampFrequency => 1_000_000;

    public long Now => Interlocked.Read(ref _now);

    public override long GetTimestamp() => Interlocked.Read(ref _now);

    public void Advance(long ticks) => Interlocked.Add(ref _now, ticks);
}
