namespace LeaseWorker.Tests;

/// <summary>A clock the test moves by hand. Only timestamps: the buses built on it use zero durations, so no timer is ever needed.</summary>
internal sealed class ManualClock : TimeProvider
{
    private long _ticks;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => Interlocked.Read(ref _ticks);

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
}
