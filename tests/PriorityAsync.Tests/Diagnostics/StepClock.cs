namespace PriorityAsync.Tests.Diagnostics;

/// <summary>An injected clock: every reading advances it by <see cref="Step"/> ticks; <see cref="Advance"/> adds more. 1 tick = 1 µs.</summary>
public sealed class StepClock : TimeProvider
{
    public const long Step = 1;

    private long _now = 1_000_000; // never 0: the library reads 0 as "no enqueue time"

    public override long TimestampFrequency => 1_000_000;

    public long Reads { get; private set; }

    public override long GetTimestamp()
    {
        Reads++;
        return Interlocked.Add(ref _now, Step);
    }

    public void Advance(long ticks) => Interlocked.Add(ref _now, ticks);
}
